"""The generation-audit layer: open-ended generations, scored offline, compared between groups or between
the two versions of a prompt, with cluster-bootstrap intervals (see :mod:`.benchmark`)."""
