import DRV260x
import HapticsSupport

extension BoardFile {
    /// Reads and validates the board file at `path`.
    /// - Throws: ``BoardFileError`` naming the file, the key, the value and what is expected.
    public static func load(path: String) throws(BoardFileError) -> BoardFile {
        try BoardParser(file: path).board(try ConfigFileReader.root(path: path))
    }

    /// Parses and validates a board file's bytes; `path` names it in errors.
    /// - Throws: ``BoardFileError`` naming the file, the key, the value and what is expected.
    public static func parse(_ bytes: [UInt8], path: String) throws(BoardFileError) -> BoardFile {
        try BoardParser(file: path).board(try ConfigFileReader.root(bytes, path: path))
    }

    /// Whether `name` is a valid board or actuator name (lowercase letters, digits, `.`, `_`, `-`;
    /// starts with a letter or digit; 1…48 characters).
    public static func isValidName(_ name: String) -> Bool { ConfigFileReader.isValidName(name, longest: 48) }
}

/// The validating reader behind ``BoardFile/parse(_:path:)``.
private struct BoardParser {
    let file: String
    var reader: ConfigFileReader { ConfigFileReader(file: file, keys: BoardFileKeys.keys) }

    func fail(_ key: String, _ problem: String, expected: String? = nil) -> BoardFileError {
        reader.fail(key, problem, expected: expected)
    }

    /// Runs a cursor lookup, turning its path error into a board-file error.
    func read<T>(_ body: () throws(JSONPathError) -> T) throws(BoardFileError) -> T {
        try reader.read(body)
    }

    func board(_ root: JSONCursor) throws(BoardFileError) -> BoardFile {
        let object = try read { () throws(JSONPathError) in try root.object() }
        try read { () throws(JSONPathError) in
            try object.rejectUnknownKeys(allowed: ["format", "name", "description", "gpio_chip", "pwm_chip", "actuators"])
        }
        let format = try read { () throws(JSONPathError) in try object.required("format").integer(in: 0...1_000) }
        guard format == BoardFile.formatVersion else {
            throw fail("$.format", "format \(format) is not supported: this version reads format \(BoardFile.formatVersion)")
        }
        let name = try self.name(object, key: "name")
        let description = try read { () throws(JSONPathError) in try object.optional("description")?.string() }
        let gpioChip = try read { () throws(JSONPathError) in try object.optional("gpio_chip")?.string() }
        if let gpioChip { try checkGPIOChip(gpioChip, key: "$.gpio_chip") }
        let pwmChip = try read { () throws(JSONPathError) in try object.optional("pwm_chip")?.string() }
        if let pwmChip { try checkPWMChip(pwmChip, key: "$.pwm_chip") }
        let entries = try read { () throws(JSONPathError) in try object.required("actuators").array() }
        guard (1...16).contains(entries.count) else {
            throw fail("$.actuators", "holds \(entries.count) actuators, allowed 1...16")
        }
        var actuators: [ActuatorConfig] = []
        var i2cActuators: [I2CActuatorConfig] = []
        var names: [String: String] = [:]
        for entry in entries {
            let (name, key): (String, String)
            if try isI2C(entry) {
                let actuator = try i2cActuator(entry, gpioChip: gpioChip)
                if let twin = i2cActuators.first(where: { $0.busPath == actuator.busPath && $0.address == actuator.address }) {
                    throw fail(
                        "\(entry.path).i2c.bus", "\(actuator.busPath) address \(hex(actuator.address)) is already \(twin.key)'s chip",
                        expected: "one actuator per chip; several DRV260x need a TCA9548A multiplexer, one bus per chip")
                }
                i2cActuators.append(actuator)
                (name, key) = (actuator.name, actuator.key)
            } else {
                let actuator = try self.actuator(entry, gpioChip: gpioChip, pwmChip: pwmChip)
                actuators.append(actuator)
                (name, key) = (actuator.name, actuator.key)
            }
            if let twin = names[name] {
                throw fail("\(entry.path).name", "\"\(name)\" is already the name of \(twin); actuator names must be unique in a board")
            }
            names[name] = key
        }
        try checkSharedHardware(actuators, enables: i2cActuators.compactMap(\.enable))
        return BoardFile(path: file, name: name, description: description, actuators: actuators, i2cActuators: i2cActuators)
    }

    func name(_ object: JSONObjectCursor, key: String) throws(BoardFileError) -> String {
        let cursor = try read { () throws(JSONPathError) in try object.required(key) }
        let name = try read { () throws(JSONPathError) in try cursor.string() }
        guard BoardFile.isValidName(name) else { throw fail(cursor.path, "\"\(name)\" is not a valid name") }
        return name
    }

    func checkGPIOChip(_ chip: String, key: String) throws(BoardFileError) {
        let valid = !chip.isEmpty && !chip.contains(" ") && (chip.hasPrefix("/") || !chip.contains("/"))
        guard valid else { throw fail(key, "\"\(chip)\" is not a GPIO chip name or absolute path") }
    }

    func checkPWMChip(_ chip: String, key: String) throws(BoardFileError) {
        let digits = chip.dropFirst("pwmchip".count)
        guard chip.hasPrefix("pwmchip"), !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw fail(key, "\"\(chip)\" is not a sysfs PWM chip name")
        }
    }

    func actuator(_ entry: JSONCursor, gpioChip: String?, pwmChip: String?) throws(BoardFileError) -> ActuatorConfig {
        let object = try read { () throws(JSONPathError) in try entry.object() }
        try read { () throws(JSONPathError) in
            try object.rejectUnknownKeys(allowed: [
                "name", "description", "topology", "actuator", "gpio", "pwm", "driver", "limits", "update_interval_ms", "amplitude_steps",
            ])
        }
        let base = entry.path
        let name = try self.name(object, key: "name")
        let description = try read { () throws(JSONPathError) in try object.optional("description")?.string() }
        let topologyName = try read { () throws(JSONPathError) in
            try object.required("topology").string(oneOf: BoardFileKeys.topologies)
        }
        let topology = Topology(rawValue: topologyName)!
        let actuator = try actuatorType(object, topology: topology, base: base)
        let gpio = try self.gpio(object.optional("gpio"), topology: topology, defaultChip: gpioChip, base: base)
        let pwm = try self.pwm(object.optional("pwm"), topology: topology, defaultChip: pwmChip, base: base)
        let driver = try self.driver(object.optional("driver"), topology: topology, base: base)
        let limits = try self.limits(object.optional("limits"), topology: topology, actuator: actuator, base: base)
        var interval: UInt64 = 2_000_000
        if topology == .lraHBridge, let lowest = limits.frequencyRange?.lowerBound {
            interval = max(interval, periodNanoseconds(forFrequency: lowest))
        }
        if let milliseconds = try read({ () throws(JSONPathError) in try object.optional("update_interval_ms")?.number(in: 0.1...1_000) }) {
            interval = UInt64((milliseconds * 1e6).rounded())
        }
        let steps = try read { () throws(JSONPathError) in try object.optional("amplitude_steps")?.integer(in: 2...65_536) } ?? 256
        return ActuatorConfig(
            name: name, description: description, topology: topology, actuator: actuator, gpio: gpio, pwm: pwm, driver: driver, limits: limits,
            updateIntervalNanoseconds: interval, amplitudeSteps: steps, key: base)
    }

    func actuatorType(_ object: JSONObjectCursor, topology: Topology, base: String) throws(BoardFileError) -> ActuatorType {
        let given = try read { () throws(JSONPathError) in
            try object.optional("actuator")?.string(oneOf: ActuatorType.allCases.map(\.rawValue))
        }.flatMap(ActuatorType.init(rawValue:))
        switch topology {
        case .driverIC, .pwmVibrator:
            guard let given else {
                throw fail("\(base).actuator", "required key is missing: a \(topology.rawValue) drives an \"lra\" or an \"erm\"")
            }
            return given
        case .ermTransistor:
            if let given, given != .erm { throw fail("\(base).actuator", "\"\(given.rawValue)\" does not fit topology erm-transistor", expected: "\"erm\" (or leave it out)") }
            return .erm
        case .lraHBridge:
            if let given, given != .lra { throw fail("\(base).actuator", "\"\(given.rawValue)\" does not fit topology lra-hbridge", expected: "\"lra\" (or leave it out)") }
            return .lra
        }
    }

    func gpio(_ cursor: JSONCursor?, topology: Topology, defaultChip: String?, base: String) throws(BoardFileError) -> GPIOConfig? {
        let key = "\(base).gpio"
        guard let cursor else {
            if topology == .driverIC {
                throw fail(key, "required key is missing: a driver-ic needs its enable line", expected: "{\"chip\": \"gpiochip0\", \"enable\": 17}")
            }
            return nil
        }
        let object = try read { () throws(JSONPathError) in try cursor.object() }
        try read { () throws(JSONPathError) in try object.rejectUnknownKeys(allowed: ["chip", "enable", "direction"]) }
        let enable = try line(object.optional("enable"))
        let direction = try line(object.optional("direction"))
        if direction != nil, topology != .lraHBridge {
            let hint = topology == .pwmVibrator ? "a pwm-vibrator's direction is a PWM: use \"pwm.direction_channel\"" : "only lra-hbridge has a direction line"
            throw fail("\(key).direction", "topology \(topology.rawValue) has no direction line", expected: hint)
        }
        if topology == .driverIC, enable == nil {
            throw fail("\(key).enable", "required key is missing: a driver-ic needs its enable line")
        }
        guard enable != nil || direction != nil else {
            throw fail(key, "lists no lines", expected: "\"enable\" (and for lra-hbridge \"direction\"), or leave \"gpio\" out")
        }
        if let enable, let direction, enable.reference == direction.reference {
            throw fail("\(key).direction", "\(direction) is also the enable line", expected: "two different lines")
        }
        let chipKey = object.optional("chip") != nil ? "\(key).chip" : "$.gpio_chip"
        guard let chip = try read({ () throws(JSONPathError) in try object.optional("chip")?.string() }) ?? defaultChip else {
            throw fail("\(key).chip", "required key is missing (and the board sets no \"gpio_chip\")")
        }
        try checkGPIOChip(chip, key: chipKey)
        return GPIOConfig(chip: chip, enable: enable, direction: direction, chipKey: chipKey)
    }

    func line(_ cursor: JSONCursor?) throws(BoardFileError) -> LineConfig? {
        guard let cursor else { return nil }
        switch cursor.value {
        case .number, .string:
            return LineConfig(reference: try lineReference(cursor), key: cursor.path)
        case .object:
            let object = try read { () throws(JSONPathError) in try cursor.object() }
            try read { () throws(JSONPathError) in try object.rejectUnknownKeys(allowed: ["line", "active_low"]) }
            let reference = try lineReference(try read { () throws(JSONPathError) in try object.required("line") })
            let activeLow = try read { () throws(JSONPathError) in try object.optional("active_low")?.bool() } ?? false
            return LineConfig(reference: reference, activeLow: activeLow, key: cursor.path)
        default:
            throw fail(cursor.path, "expected a line offset, a line name or an object, found \(cursor.value.typeName)")
        }
    }

    func lineReference(_ cursor: JSONCursor) throws(BoardFileError) -> LineConfig.Reference {
        if case .string(let name) = cursor.value {
            guard !name.isEmpty else { throw fail(cursor.path, "an empty line name") }
            return .name(name)
        }
        return .offset(try read { () throws(JSONPathError) in try cursor.integer(in: 0...65_535) })
    }

    func pwm(_ cursor: JSONCursor?, topology: Topology, defaultChip: String?, base: String) throws(BoardFileError) -> PWMConfig {
        let key = "\(base).pwm"
        guard let cursor else { throw fail(key, "required key is missing") }
        let object = try read { () throws(JSONPathError) in try cursor.object() }
        try read { () throws(JSONPathError) in
            try object.rejectUnknownKeys(allowed: ["chip", "channel", "frequency_hz", "polarity", "direction_channel", "direction_duty"])
        }
        let chipKey = object.optional("chip") != nil ? "\(key).chip" : "$.pwm_chip"
        guard let chip = try read({ () throws(JSONPathError) in try object.optional("chip")?.string() }) ?? defaultChip else {
            throw fail("\(key).chip", "required key is missing (and the board sets no \"pwm_chip\")")
        }
        try checkPWMChip(chip, key: chipKey)
        let channel = try read { () throws(JSONPathError) in try object.required("channel").integer(in: 0...1_023) }
        var carrier: Double?
        if topology == .lraHBridge {
            if object.optional("frequency_hz") != nil {
                throw fail(
                    "\(key).frequency_hz", "an lra-hbridge has no carrier: its PWM period is the drive frequency",
                    expected: "no \"frequency_hz\"; set \"limits.frequency_min_hz\" and \"limits.frequency_max_hz\" instead")
            }
        } else {
            carrier = try read { () throws(JSONPathError) in try object.required("frequency_hz").number(in: 1...1_000_000) }
        }
        let polarityName = try read { () throws(JSONPathError) in
            try object.optional("polarity")?.string(oneOf: PWMPolarity.allCases.map(\.rawValue))
        }
        let directionChannel = try read { () throws(JSONPathError) in try object.optional("direction_channel")?.integer(in: 0...1_023) }
        if directionChannel != nil, topology != .pwmVibrator {
            throw fail("\(key).direction_channel", "topology \(topology.rawValue) has no direction PWM", expected: "only pwm-vibrator has one")
        }
        if let directionChannel, directionChannel == channel {
            throw fail("\(key).direction_channel", "\(directionChannel) is also \"channel\"", expected: "a different channel of the same chip")
        }
        let directionDuty = try read { () throws(JSONPathError) in try object.optional("direction_duty")?.number(in: 0...1) }
        if directionDuty != nil, directionChannel == nil {
            throw fail("\(key).direction_duty", "set without \"direction_channel\"", expected: "\"direction_channel\" as well, or no \"direction_duty\"")
        }
        return PWMConfig(
            chip: chip, channel: channel, carrierFrequency: carrier, polarity: polarityName.flatMap(PWMPolarity.init(rawValue:)) ?? .normal,
            directionChannel: directionChannel, directionDuty: directionDuty ?? 0.5, chipKey: chipKey, channelKey: "\(key).channel")
    }

    func driver(_ cursor: JSONCursor?, topology: Topology, base: String) throws(BoardFileError) -> DriverICConfig? {
        let key = "\(base).driver"
        guard topology == .driverIC else {
            if cursor != nil { throw fail(key, "only a driver-ic has a \"driver\" section", expected: "no \"driver\" for \(topology.rawValue)") }
            return nil
        }
        guard let cursor else { return DriverICConfig() }
        let object = try read { () throws(JSONPathError) in try cursor.object() }
        try read { () throws(JSONPathError) in try object.rejectUnknownKeys(allowed: ["zero_duty", "full_duty", "enable_to_ready_us"]) }
        let zero = try read { () throws(JSONPathError) in try object.optional("zero_duty")?.number(in: 0...0.95) } ?? 0.5
        let full = try read { () throws(JSONPathError) in try object.optional("full_duty")?.number(in: 0...1) } ?? 1
        guard full >= zero + 0.05 else {
            throw fail("\(key).full_duty", "\(JSONValue.format(full)) is not above zero_duty \(JSONValue.format(zero)) by at least 0.05")
        }
        let ready = try read { () throws(JSONPathError) in try object.optional("enable_to_ready_us")?.number(in: 0...1_000_000) } ?? 0
        return DriverICConfig(zeroDuty: zero, fullDuty: full, enableToReadyNanoseconds: UInt64((ready * 1_000).rounded()))
    }

    func limits(_ cursor: JSONCursor?, topology: Topology, actuator: ActuatorType, base: String) throws(BoardFileError) -> ActuatorLimits {
        let key = "\(base).limits"
        guard let cursor else { throw fail(key, "required key is missing: every actuator states its limits") }
        let object = try read { () throws(JSONPathError) in try cursor.object() }
        try read { () throws(JSONPathError) in
            try object.rejectUnknownKeys(allowed: [
                "resonant_frequency_hz", "nominal_frequency_hz", "frequency_min_hz", "frequency_max_hz", "rated_level", "overdrive_level",
                "overdrive_max_ms", "max_continuous_ms", "rest_ms", "dead_zone",
            ])
        }
        func number(_ name: String, _ range: ClosedRange<Double>) throws(BoardFileError) -> Double? {
            try read { () throws(JSONPathError) in try object.optional(name)?.number(in: range) }
        }
        func milliseconds(_ value: Double) -> UInt64 { UInt64((value * 1e6).rounded()) }

        var resonance: Double?
        var nominal: Double?
        switch actuator {
        case .lra:
            guard let value = try number("resonant_frequency_hz", 20...1_000) else {
                throw fail("\(key).resonant_frequency_hz", "required key is missing: an LRA states its resonance")
            }
            resonance = value
            if object.optional("nominal_frequency_hz") != nil {
                throw fail("\(key).nominal_frequency_hz", "is for ERMs", expected: "\"resonant_frequency_hz\" for an LRA")
            }
        case .erm:
            if object.optional("resonant_frequency_hz") != nil {
                throw fail("\(key).resonant_frequency_hz", "is for LRAs", expected: "\"nominal_frequency_hz\" for an ERM")
            }
            nominal = try number("nominal_frequency_hz", 1...1_000)
        }

        var range: ClosedRange<Double>?
        let low = try number("frequency_min_hz", 1...10_000)
        let high = try number("frequency_max_hz", 1...10_000)
        if topology == .lraHBridge, let resonance {
            let lowest = low ?? (resonance * 0.75).rounded()
            let highest = high ?? (resonance * 1.5).rounded()
            guard lowest <= resonance else {
                throw fail("\(key).frequency_min_hz", "\(JSONValue.format(lowest)) is above resonant_frequency_hz \(JSONValue.format(resonance))")
            }
            guard highest >= resonance else {
                throw fail("\(key).frequency_max_hz", "\(JSONValue.format(highest)) is below resonant_frequency_hz \(JSONValue.format(resonance))")
            }
            range = lowest...highest
        } else if low != nil || high != nil {
            let which = low != nil ? "frequency_min_hz" : "frequency_max_hz"
            throw fail("\(key).\(which)", "only an lra-hbridge chooses its drive frequency", expected: "no \"\(which)\" for \(topology.rawValue)")
        }

        guard let rated = try number("rated_level", 0.01...1) else {
            throw fail("\(key).rated_level", "required key is missing: the highest sustained level keeps the actuator safe")
        }
        let overdrive = try number("overdrive_level", rated...1) ?? rated
        var kick: UInt64 = 0
        if let value = try number("overdrive_max_ms", 1...200) {
            kick = milliseconds(value)
        } else if overdrive > rated {
            throw fail(
                "\(key).overdrive_max_ms",
                "required key is missing: overdrive_level \(JSONValue.format(overdrive)) is above rated_level \(JSONValue.format(rated)), so the kick needs a bound")
        }
        guard let continuous = try number("max_continuous_ms", 10...600_000) else {
            throw fail("\(key).max_continuous_ms", "required key is missing: the longest continuous drive keeps the actuator from overheating")
        }
        let rest = try number("rest_ms", 0...60_000) ?? 20
        let deadZone = try number("dead_zone", 0...0.9) ?? 0
        if deadZone > 0, topology == .driverIC || topology == .lraHBridge {
            throw fail("\(key).dead_zone", "topology \(topology.rawValue) has no dead zone", expected: "only erm-transistor and pwm-vibrator have one")
        }
        guard deadZone < rated else {
            throw fail("\(key).dead_zone", "\(JSONValue.format(deadZone)) is not below rated_level \(JSONValue.format(rated))")
        }
        return ActuatorLimits(
            resonantFrequency: resonance, nominalFrequency: nominal, frequencyRange: range, ratedLevel: rated, overdriveLevel: overdrive,
            overdriveMaxNanoseconds: kick, maxContinuousNanoseconds: milliseconds(continuous), restNanoseconds: milliseconds(rest),
            deadZone: deadZone)
    }

    /// No two actuators of a board may share a GPIO line (the I²C chips' EN lines included) or a PWM channel.
    func checkSharedHardware(_ actuators: [ActuatorConfig], enables: [GPIOConfig]) throws(BoardFileError) {
        var lines: [String: String] = [:]
        var channels: [String: String] = [:]
        for gpio in actuators.compactMap(\.gpio) + enables {
            for (_, line) in gpio.lines {
                let id = "\(gpio.chip) \(line.reference)"
                if let other = lines[id] {
                    throw fail(line.key, "\(line) of \(gpio.chip) is already used at \(other)", expected: "a line no other actuator uses")
                }
                lines[id] = line.key
            }
        }
        for actuator in actuators {
            var used = [(actuator.pwm.channel, actuator.pwm.channelKey)]
            if let direction = actuator.pwm.directionChannel { used.append((direction, "\(actuator.key).pwm.direction_channel")) }
            for (channel, key) in used {
                let id = "\(actuator.pwm.chip)/\(channel)"
                if let other = channels[id] {
                    throw fail(key, "channel \(channel) of \(actuator.pwm.chip) is already used at \(other)", expected: "a channel no other actuator uses")
                }
                channels[id] = key
            }
        }
    }
}

// MARK: Actuators behind a driver IC on I²C

extension BoardParser {
    /// Whether `entry` is an actuator of topology `i2c` (a missing or bad topology is the GPIO
    /// parser's to report).
    func isI2C(_ entry: JSONCursor) throws(BoardFileError) -> Bool {
        let object = try read { () throws(JSONPathError) in try entry.object() }
        guard case .string(let topology)? = object.optional("topology")?.value else { return false }
        return topology == BoardFileKeys.i2cTopology
    }

    func i2cActuator(_ entry: JSONCursor, gpioChip: String?) throws(BoardFileError) -> I2CActuatorConfig {
        let object = try read { () throws(JSONPathError) in try entry.object() }
        let base = entry.path
        for key in ["pwm", "driver", "amplitude_steps"] where object.optional(key) != nil {
            throw fail("\(base).\(key)", "topology i2c has no \"\(key)\": the chip on the bus is the driver", expected: "\"i2c\" and \"drive\"")
        }
        try read { () throws(JSONPathError) in
            try object.rejectUnknownKeys(allowed: ["name", "description", "topology", "actuator", "i2c", "gpio", "drive", "limits", "update_interval_ms"])
        }
        let name = try self.name(object, key: "name")
        let description = try read { () throws(JSONPathError) in try object.optional("description")?.string() }
        guard
            let actuatorName = try read({ () throws(JSONPathError) in
                try object.optional("actuator")?.string(oneOf: DRV260xDrive.Actuator.allCases.map(\.rawValue))
            })
        else {
            throw fail("\(base).actuator", "required key is missing: a driver IC drives an \"lra\" or an \"erm\"")
        }
        let actuator = DRV260xDrive.Actuator(rawValue: actuatorName)!

        // The bus, the address, the chip.
        let i2cKey = "\(base).i2c"
        guard let i2c = object.optional("i2c") else { throw fail(i2cKey, "required key is missing: topology i2c names its bus and chip") }
        let bus = try read { () throws(JSONPathError) in try i2c.object() }
        try read { () throws(JSONPathError) in try bus.rejectUnknownKeys(allowed: ["bus", "address", "chip"]) }
        let busPath: String
        guard let busCursor = bus.optional("bus") else { throw fail("\(i2cKey).bus", "required key is missing") }
        switch busCursor.value {
        case .number:
            busPath = "/dev/i2c-\(try read { () throws(JSONPathError) in try busCursor.integer(in: 0...1_023) })"
        default:
            let path = try read { () throws(JSONPathError) in try busCursor.string() }
            let number = path.hasPrefix("/dev/i2c-") ? Int(path.dropFirst("/dev/i2c-".count)) : nil
            guard let number, (0...1_023).contains(number) else { throw fail(busCursor.path, "\"\(path)\" is not an I2C bus") }
            busPath = path
        }
        let chipName = try read { () throws(JSONPathError) in
            try bus.required("chip").string(oneOf: DRV260x.Chip.allCases.map(\.rawValue))
        }
        let chip = DRV260x.Chip(rawValue: chipName)!
        if let addressCursor = bus.optional("address") {
            let address: Int?
            switch addressCursor.value {
            case .number: address = try read { () throws(JSONPathError) in try addressCursor.integer(in: 0...0x7F) }
            case .string(let text): address = text.lowercased().hasPrefix("0x") ? Int(text.dropFirst(2), radix: 16) : nil
            default: address = try read { () throws(JSONPathError) in try addressCursor.integer(in: 0...0x7F) }
            }
            guard let address, (0...0x7F).contains(address) else {
                throw fail(addressCursor.path, "is not a 7-bit I2C address", expected: "\"0x5a\" (or 90)")
            }
            guard address == Int(DRV260x.address) else {
                throw fail(
                    addressCursor.path, "\(hex(UInt8(address))) is not where a \(chipName) answers: its address is fixed at 0x5a",
                    expected: "\"0x5a\", or leave it out; for several chips put each on its own bus behind a TCA9548A multiplexer")
            }
        }

        // The chip's EN on a GPIO line, if wired (else EN is tied high).
        var enable: GPIOConfig?
        if let gpioCursor = object.optional("gpio") {
            let key = "\(base).gpio"
            let gpio = try read { () throws(JSONPathError) in try gpioCursor.object() }
            try read { () throws(JSONPathError) in try gpio.rejectUnknownKeys(allowed: ["chip", "enable"]) }
            guard let line = try line(gpio.optional("enable")) else {
                throw fail("\(key).enable", "required key is missing: the line wired to the chip's EN", expected: "{\"chip\": \"gpiochip0\", \"enable\": 17}, or no \"gpio\" when EN is tied high")
            }
            let chipKey = gpio.optional("chip") != nil ? "\(key).chip" : "$.gpio_chip"
            guard let chip = try read({ () throws(JSONPathError) in try gpio.optional("chip")?.string() }) ?? gpioChip else {
                throw fail("\(key).chip", "required key is missing (and the board sets no \"gpio_chip\")")
            }
            try checkGPIOChip(chip, key: chipKey)
            enable = GPIOConfig(chip: chip, enable: line, direction: nil, chipKey: chipKey)
        }

        // The drive.
        let driveKey = "\(base).drive"
        guard let driveCursor = object.optional("drive") else {
            throw fail(driveKey, "required key is missing: the chip's full scale comes from the motor's rated and overdrive voltages")
        }
        let drive = try read { () throws(JSONPathError) in try driveCursor.object() }
        try read { () throws(JSONPathError) in try drive.rejectUnknownKeys(allowed: ["rated_voltage", "overdrive_voltage", "loop", "library"]) }
        let rated = try read { () throws(JSONPathError) in try drive.required("rated_voltage").number(in: 0.1...5.5) }
        let overdrive = try read { () throws(JSONPathError) in try drive.required("overdrive_voltage").number(in: 0.1...5.6) }
        guard overdrive >= rated else {
            throw fail(
                "\(driveKey).overdrive_voltage", "\(JSONValue.format(overdrive)) V is below rated_voltage \(JSONValue.format(rated)) V",
                expected: "at least the rated voltage (the clamp also bounds the kick)")
        }
        let loopName = try read { () throws(JSONPathError) in try drive.optional("loop")?.string(oneOf: DRV260xDrive.Loop.allCases.map(\.rawValue)) }
        let loop = loopName.flatMap(DRV260xDrive.Loop.init(rawValue:)) ?? .closed
        if loop == .open, actuator == .lra, !chip.hasOpenLoopPeriod {
            throw fail(
                "\(driveKey).loop", "a \(chipName) cannot drive an LRA in open loop (it has no OL_LRA_PERIOD)",
                expected: "\"closed\", or a drv2605l / drv2604l")
        }
        var library: DRV260x.ROMLibrary?
        if chip.hasROMLibrary {
            let libraryName = try read { () throws(JSONPathError) in
                try drive.optional("library")?.string(oneOf: chip.libraries.map(\.rawValue))
            }
            library = libraryName.flatMap(DRV260x.ROMLibrary.init(rawValue:)) ?? (actuator == .lra ? .lra : .a)
            if actuator == .lra, library != .lra {
                throw fail("\(driveKey).library", "\"\(library!.rawValue)\" is an ERM library", expected: "\"lra\" for an LRA")
            }
            if actuator == .erm, library == .lra {
                throw fail("\(driveKey).library", "\"lra\" is the LRA library", expected: "\"a\" ... \"\(chip == .drv2605l ? "f" : "e")\" for an ERM")
            }
        } else if drive.optional("library") != nil {
            throw fail("\(driveKey).library", "a \(chipName) has no ROM effect library", expected: "no \"library\" (a drv2605 or drv2605l has one)")
        }

        // The limits: an LRA's resonance (optional: the chip tracks it), the continuous drive.
        let limitsKey = "\(base).limits"
        guard let limitsCursor = object.optional("limits") else {
            throw fail(limitsKey, "required key is missing: every actuator states its limits (at least \"max_continuous_ms\")")
        }
        let limits = try read { () throws(JSONPathError) in try limitsCursor.object() }
        try read { () throws(JSONPathError) in
            try limits.rejectUnknownKeys(allowed: ["resonant_frequency_hz", "nominal_frequency_hz", "overdrive_max_ms", "max_continuous_ms", "rest_ms"])
        }
        func number(_ name: String, _ range: ClosedRange<Double>) throws(BoardFileError) -> Double? {
            try read { () throws(JSONPathError) in try limits.optional(name)?.number(in: range) }
        }
        let resonance = try number("resonant_frequency_hz", 50...500)
        if resonance != nil, actuator == .erm {
            throw fail("\(limitsKey).resonant_frequency_hz", "is for LRAs", expected: "\"nominal_frequency_hz\" for an ERM")
        }
        let nominal = try number("nominal_frequency_hz", 1...1_000)
        if nominal != nil, actuator == .lra {
            throw fail("\(limitsKey).nominal_frequency_hz", "is for ERMs", expected: "\"resonant_frequency_hz\" for an LRA (optional: the chip tracks it)")
        }
        guard let continuous = try number("max_continuous_ms", 10...600_000) else {
            throw fail("\(limitsKey).max_continuous_ms", "required key is missing: the longest continuous drive keeps the actuator from overheating")
        }
        let rest = try number("rest_ms", 0...60_000) ?? 20
        let driveConfig = DRV260xDrive(
            chip: chip, actuator: actuator, ratedVoltage: rated, overdriveVoltage: overdrive, resonantFrequency: resonance, loop: loop, library: library)
        do throws(DRV260xVoltageError) {
            _ = try DRV260xPlan(drive: driveConfig)
        } catch {
            throw fail("\(driveKey).\(error.which == .rated ? "rated_voltage" : "overdrive_voltage")", error.description)
        }
        // Closed loop: the chip kicks and brakes by itself, and full scale is the rated voltage.
        // Open loop: full scale is the clamp; above the rated level is a kick, bounded in time.
        let kick = try number("overdrive_max_ms", 1...200)
        if loop == .closed, kick != nil {
            throw fail("\(limitsKey).overdrive_max_ms", "in closed loop the chip times its own overdrive", expected: "no \"overdrive_max_ms\", or \"loop\": \"open\"")
        }
        if loop == .open, driveConfig.ratedLevel < 1, kick == nil {
            throw fail(
                "\(limitsKey).overdrive_max_ms",
                "required key is missing: in open loop overdrive_voltage \(JSONValue.format(overdrive)) V is above rated_voltage \(JSONValue.format(rated)) V, so a kick needs a bound")
        }
        let milliseconds = { (value: Double) in UInt64((value * 1e6).rounded()) }
        let actuatorLimits = ActuatorLimits(
            resonantFrequency: actuator == .lra ? (resonance ?? DRV260xDrive.assumedResonance) : nil, nominalFrequency: nominal,
            ratedLevel: driveConfig.ratedLevel, overdriveLevel: 1, overdriveMaxNanoseconds: kick.map(milliseconds) ?? 0,
            maxContinuousNanoseconds: milliseconds(continuous), restNanoseconds: milliseconds(rest))
        var interval: UInt64 = 2_000_000
        if let value = try read({ () throws(JSONPathError) in try object.optional("update_interval_ms")?.number(in: 1...1_000) }) {
            interval = milliseconds(value)
        }
        return I2CActuatorConfig(
            name: name, description: description, busPath: busPath, drive: driveConfig, limits: actuatorLimits, enable: enable,
            updateIntervalNanoseconds: interval, key: base)
    }
}
