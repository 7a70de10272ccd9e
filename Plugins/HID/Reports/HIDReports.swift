// Controller report encoders (see ControllerFamily).
