"""Item parsers every workflow may use (the ``phasegate.parsers`` entry-point group)."""
