"""The posts service: posts, votes, comments, merges, roadmap and similarity search."""
