"""The notebook layer: cards, magics and approvals on top of ``dsh_nb.tools``."""
