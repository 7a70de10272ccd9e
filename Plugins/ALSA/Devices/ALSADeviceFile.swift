import HapticsSupport

/// One waveform device on an ALSA PCM, described by a device file in `/etc/haptics/alsa.d`,
/// `$XDG_CONFIG_HOME/haptics/alsa.d` or the setting `alsa.devices` (`Hardware/alsa/README.md`):
/// the PCM, how it is opened, and which of its channels drive which actuator. Device id `alsa:NAME`.
///
/// ```json
/// {
///   "format": 1,
///   "name": "seat",
///   "description": "Two bass shakers on the rear output of a USB sound card",
///   "pcm": "hw:CARD=Device,DEV=0",
///   "channels": 4,
///   "rate_hz": 48000,
///   "period_us": 5000,
///   "periods": 3,
///   "actuators": [
///     { "name": "left", "channel": 3, "actuator": "voice-coil", "resonant_frequency_hz": 40,
///       "frequency_min_hz": 20, "frequency_max_hz": 120, "rated_level": 0.7 },
///     { "name": "right", "channel": 4, "actuator": "voice-coil", "resonant_frequency_hz": 40,
///       "frequency_min_hz": 20, "frequency_max_hz": 120, "rated_level": 0.7 }
///   ]
/// }
/// ```
public struct ALSADeviceFile: Sendable, Hashable {
    /// The version of the format this reader understands.
    public static let formatVersion = 1

    /// The file it was read from.
    public var path: String
    /// Short name; the device id is `alsa:NAME`.
    public var name: String
    /// What it is, for people.
    public var description: String?
    /// The PCM as alsa-lib names it: `hw:CARD=Device,DEV=0`, `plughw:1,0`, a name from `.asoundrc`.
    public var pcm: String
    /// The channels the PCM is opened with; those no actuator uses get silence.
    public var channels: Int
    /// Frames per second the PCM is opened at.
    public var rate: Int
    /// One period, in microseconds: how often the stream is fed, and its block size.
    public var periodMicroseconds: Int
    /// Periods in the buffer: the buffer holds `periods × period` (what is queued ahead).
    public var periods: Int
    /// Time from a sample leaving the buffer to the actuator moving, in microseconds (an amplifier,
    /// a USB transfer), beyond the buffer.
    public var latencyMicroseconds: Int
    /// The actuators, in the order the device lists its channels (1…4).
    public var actuators: [Actuator]

    /// One actuator on one channel of the PCM.
    public struct Actuator: Sendable, Hashable {
        /// Short name (`left`, `seat`).
        public var name: String
        /// The PCM channel, 1-based as sound-card documentation counts them.
        public var channel: Int
        /// What it is.
        public var kind: Kind
        /// The resonant frequency in Hz, when known.
        public var resonantFrequency: Double?
        /// The frequencies it can be driven at, in Hz.
        public var frequencyRange: ClosedRange<Double>
        /// The share of the PCM's full scale that is the actuator's rated full scale (0.01…1): the
        /// loudest sample it may get, for a transducer whose amplifier can overdrive it.
        public var ratedLevel: Double

        /// An actuator.
        public init(name: String, channel: Int, kind: Kind, resonantFrequency: Double?, frequencyRange: ClosedRange<Double>, ratedLevel: Double) {
            self.name = name
            self.channel = channel
            self.kind = kind
            self.resonantFrequency = resonantFrequency
            self.frequencyRange = frequencyRange
            self.ratedLevel = ratedLevel
        }
    }

    /// What kind of actuator follows the waveform.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A voice coil, exciter or tactile transducer (bass shaker).
        case voiceCoil = "voice-coil"
        /// A linear resonant actuator driven straight from an amplifier.
        case lra
    }

    /// A device file's content.
    public init(
        path: String, name: String, description: String?, pcm: String, channels: Int, rate: Int, periodMicroseconds: Int, periods: Int,
        latencyMicroseconds: Int, actuators: [Actuator]
    ) {
        self.path = path
        self.name = name
        self.description = description
        self.pcm = pcm
        self.channels = channels
        self.rate = rate
        self.periodMicroseconds = periodMicroseconds
        self.periods = periods
        self.latencyMicroseconds = latencyMicroseconds
        self.actuators = actuators
    }

    /// The device id: `alsa:NAME`.
    public var deviceID: String { "alsa:" + name }

    /// Frames in one period.
    public var periodFrames: Int { max(rate * periodMicroseconds / 1_000_000, 1) }

    /// What each key expects, for errors; `Hardware/alsa/README.md` lists the same.
    public static let keys = ConfigFileKeys(
        expectations: [
            "format": "\"format\": \(formatVersion)",
            "name": "a short id: lowercase letters, digits, '.', '_' or '-', starting with a letter or digit, at most 48 characters",
            "description": "a string describing it for people",
            "pcm": "an ALSA PCM name such as \"hw:CARD=Device,DEV=0\" (see `aplay -L`); \"plughw:…\" converts rate and format",
            "channels": "the channels the PCM is opened with, 1 ... 32 (see `aplay -D PCM --dump-hw-params /dev/zero`)",
            "rate_hz": "frames per second the card takes, 1000 ... 384000 (48000 on most cards)",
            "period_us": "how often the stream is fed, in microseconds, 500 ... 100000 (5000 is a good start)",
            "periods": "periods in the buffer, 2 ... 16 (more survives a busier machine, at more latency)",
            "latency_us": "time from a sample leaving the card to the actuator moving, in microseconds, 0 ... 1000000",
            "actuators": "an array of 1 ... 4 actuator objects",
            "actuators.name": "a short id: lowercase letters, digits, '.', '_' or '-', at most 31 characters",
            "channel": "the PCM channel the actuator is wired to, 1 ... channels (1 is the first)",
            "actuator": "one of: " + Kind.allCases.map(\.rawValue).joined(separator: ", "),
            "resonant_frequency_hz": "the actuator's resonant frequency in Hz from its data sheet (1 ... 2000)",
            "frequency_min_hz": "the lowest frequency to drive it at, in Hz (1 ... 20000), below frequency_max_hz",
            "frequency_max_hz": "the highest frequency to drive it at, in Hz (1 ... 20000, below half of rate_hz)",
            "rated_level": "the share of full scale that is the actuator's rated drive, 0.01 ... 1 (default 1)",
        ],
        guide: "Hardware/alsa/README.md")
}

extension ALSADeviceFile {
    /// Reads and validates the device file at `path`.
    /// - Throws: ``ConfigFileError`` naming the file, the key, the value and what is expected.
    public static func load(path: String) throws(ConfigFileError) -> ALSADeviceFile {
        try parse(try ConfigFileReader.root(path: path), path: path)
    }

    /// Parses and validates a device file's bytes; `path` names it in errors.
    public static func parse(_ bytes: [UInt8], path: String) throws(ConfigFileError) -> ALSADeviceFile {
        try parse(try ConfigFileReader.root(bytes, path: path), path: path)
    }

    static func parse(_ root: JSONCursor, path: String) throws(ConfigFileError) -> ALSADeviceFile {
        let reader = ConfigFileReader(file: path, keys: keys)
        let object = try reader.read { () throws(JSONPathError) in try root.object() }
        try reader.read { () throws(JSONPathError) in
            try object.rejectUnknownKeys(allowed: [
                "format", "name", "description", "pcm", "channels", "rate_hz", "period_us", "periods", "latency_us", "actuators",
            ])
        }
        let format = try reader.read { () throws(JSONPathError) in try object.required("format").integer(in: 0...1_000) }
        guard format == formatVersion else {
            throw reader.fail("$.format", "format \(format) is not supported by this version (it reads \(formatVersion))")
        }
        let name = try reader.read { () throws(JSONPathError) in try object.required("name").string() }
        guard ConfigFileReader.isValidName(name, longest: 48) else { throw reader.fail("$.name", "\"\(name)\" is not a valid name") }
        let description = try reader.read { () throws(JSONPathError) in try object.optional("description")?.string() }
        let pcm = try reader.read { () throws(JSONPathError) in try object.required("pcm").string() }
        guard !pcm.isEmpty, pcm.utf8.count < 256, !pcm.contains("\n") else { throw reader.fail("$.pcm", "\"\(pcm.prefix(40))\" is not a PCM name") }
        let channels = try reader.read { () throws(JSONPathError) in try object.required("channels").integer(in: 1...32) }
        let rate = try reader.read { () throws(JSONPathError) in try object.optional("rate_hz")?.integer(in: 1_000...384_000) } ?? 48_000
        let period = try reader.read { () throws(JSONPathError) in try object.optional("period_us")?.integer(in: 500...100_000) } ?? 5_000
        let periods = try reader.read { () throws(JSONPathError) in try object.optional("periods")?.integer(in: 2...16) } ?? 3
        let latency = try reader.read { () throws(JSONPathError) in try object.optional("latency_us")?.integer(in: 0...1_000_000) } ?? 0
        let entries = try reader.read { () throws(JSONPathError) in try object.required("actuators").array() }
        guard (1...4).contains(entries.count) else {
            throw reader.fail("$.actuators", "\(entries.count) actuators; a device has 1 ... 4")
        }
        var actuators: [Actuator] = []
        for entry in entries {
            let actuator = try self.actuator(entry, reader: reader, channels: channels, rate: rate)
            if let twin = actuators.first(where: { $0.name == actuator.name }) {
                throw reader.fail("\(entry.path).name", "\"\(twin.name)\" is already the name of another actuator; names must be unique in a device")
            }
            if let twin = actuators.first(where: { $0.channel == actuator.channel }) {
                throw reader.fail("\(entry.path).channel", "channel \(actuator.channel) already drives \"\(twin.name)\"; each actuator needs its own channel")
            }
            actuators.append(actuator)
        }
        return ALSADeviceFile(
            path: path, name: name, description: description, pcm: pcm, channels: channels, rate: rate, periodMicroseconds: period,
            periods: periods, latencyMicroseconds: latency, actuators: actuators)
    }

    static func actuator(_ entry: JSONCursor, reader: ConfigFileReader, channels: Int, rate: Int) throws(ConfigFileError) -> Actuator {
        let object = try reader.read { () throws(JSONPathError) in try entry.object() }
        try reader.read { () throws(JSONPathError) in
            try object.rejectUnknownKeys(allowed: [
                "name", "channel", "actuator", "resonant_frequency_hz", "frequency_min_hz", "frequency_max_hz", "rated_level",
            ])
        }
        let base = entry.path
        let name = try reader.read { () throws(JSONPathError) in try object.required("name").string() }
        guard ConfigFileReader.isValidName(name, longest: 31) else { throw reader.fail("\(base).name", "\"\(name)\" is not a valid name") }
        let channel = try reader.read { () throws(JSONPathError) in try object.required("channel").integer(in: 1...32) }
        guard channel <= channels else {
            throw reader.fail("\(base).channel", "channel \(channel) is beyond the \(channels) channels the PCM is opened with")
        }
        let kindName = try reader.read { () throws(JSONPathError) in
            try object.optional("actuator")?.string(oneOf: Kind.allCases.map(\.rawValue))
        } ?? Kind.voiceCoil.rawValue
        let resonance = try reader.read { () throws(JSONPathError) in try object.optional("resonant_frequency_hz")?.number(in: 1...2_000) }
        let nyquist = Double(rate) / 2
        let low = try reader.read { () throws(JSONPathError) in try object.optional("frequency_min_hz")?.number(in: 1...20_000) }
            ?? resonance.map { $0 / 2 } ?? 20
        let high = try reader.read { () throws(JSONPathError) in try object.optional("frequency_max_hz")?.number(in: 1...20_000) }
            ?? min(resonance.map { $0 * 2 } ?? 400, nyquist * 0.8)
        guard low < high else {
            throw reader.fail("\(base).frequency_min_hz", "\(low) Hz is not below frequency_max_hz (\(high) Hz)")
        }
        guard high < nyquist else {
            throw reader.fail("\(base).frequency_max_hz", "\(high) Hz is not below half the rate (\(nyquist) Hz at rate_hz \(rate))")
        }
        if let resonance, !(low...high).contains(resonance) {
            throw reader.fail("\(base).resonant_frequency_hz", "\(resonance) Hz lies outside frequency_min_hz ... frequency_max_hz (\(low) ... \(high) Hz)")
        }
        let rated = try reader.read { () throws(JSONPathError) in try object.optional("rated_level")?.number(in: 0.01...1) } ?? 1
        return Actuator(name: name, channel: channel, kind: Kind(rawValue: kindName)!, resonantFrequency: resonance, frequencyRange: low...high, ratedLevel: rated)
    }
}
