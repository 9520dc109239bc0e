"""The human interface of p2pkille (the ``p2pkille`` command)."""
