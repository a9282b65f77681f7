// One mind graph per agent: a node per chain that starts with the agent (SEMANTICS.md 2).
UNWIND $chains AS agents
CREATE (:Perspective {agents: agents, depth: size(agents)})
