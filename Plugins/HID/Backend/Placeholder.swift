// Placeholder until the HID backend lands (helper at work).
