"""Text in: candidate .tom statements from conversation, checked before anything is written.

The pipeline (docs/extract.md):

    messages.py    text, a chat export or stdin  -> [Message(id, speaker, channel, time, text)]
    prompt.py      messages + what the memory holds -> Prompt(system, user, schema)
    providers.py   Prompt -> the model's raw answer (Anthropic, any OpenAI-compatible server)
    candidates.py  raw answer -> [Candidate]: parsed, tied to the text they came from, given
                   the message's time, checked against the memory in order, flagged
    pipeline.py    the whole of it, and `apply` of the candidates that check

A model's answer is data like any text: it can only propose statements, each of which goes
through the same checker as typed input, and nothing is written unless asked.
"""
