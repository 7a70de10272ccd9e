// Placeholder until the GPIO backend lands (helper at work).
