"""How a call is run and stopped: abort signals, the timeout policy, worker threads."""
