// Placeholder until the GPIO board model lands (helper at work).
