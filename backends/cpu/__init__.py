"""cuzk's CPU reference backend, registered through the ``cuzk`` entry-point group."""
