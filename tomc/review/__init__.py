"""Policy reviews: what a policy says (listing.py), what changing it changes (diff.py,
search.py), and a run to look at (html.py)."""
