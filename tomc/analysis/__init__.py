"""What agents ask of memory: false beliefs, who knows, handoffs, common ground,
explanations, announcement plans and prompt contexts, computed over a belief view."""
