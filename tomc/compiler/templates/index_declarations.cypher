// The world graph's index of declarations by revision: a memory declares a clock line with
// many of its writes, so catching up (read_applied.cypher) and declaring (declare.cypher)
// find one by revision without a scan of them all.
CREATE INDEX FOR (d:Declaration) ON (d.rev)
