// Placeholder until calibration lands (helper at work).
