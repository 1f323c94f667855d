"""The first-run screen: agent homes found on this machine and places to open."""
