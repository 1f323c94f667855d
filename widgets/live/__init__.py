"""Live mode indicators: what the follower is doing and when it last saw a change."""
