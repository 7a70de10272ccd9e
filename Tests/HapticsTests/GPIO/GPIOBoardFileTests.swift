import Foundation
import GPIOBoards
import HapticsSupport
import Testing

/// A valid driver-ic board as a JSON value, and edits at a path (`["actuators", "0", "pwm", "channel"]`).
enum BoardJSON {
    static let base: JSONValue = try! JSONParser().parse(
        """
        {"format": 1, "name": "test-board", "gpio_chip": "gpiochip0", "pwm_chip": "pwmchip0",
         "actuators": [{"name": "lra", "topology": "driver-ic", "actuator": "lra", "gpio": {"enable": 17},
                        "pwm": {"channel": 0, "frequency_hz": 20000},
                        "limits": {"resonant_frequency_hz": 175, "rated_level": 0.8, "overdrive_level": 1,
                                   "overdrive_max_ms": 12, "max_continuous_ms": 5000}}]}
        """)

    /// `value` with the member at `path` replaced (nil removes it).
    static func setting(_ value: JSONValue, _ path: [String], to replacement: JSONValue?) -> JSONValue {
        guard let first = path.first else { return replacement ?? .null }
        let rest = Array(path.dropFirst())
        switch value {
        case .object(var object):
            if rest.isEmpty {
                object[first] = replacement
            } else {
                object[first] = setting(object[first] ?? .object(JSONObject()), rest, to: replacement)
            }
            return .object(object)
        case .array(var elements):
            let index = Int(first)!
            elements[index] = rest.isEmpty ? replacement ?? .null : setting(elements[index], rest, to: replacement)
            return .array(elements)
        default:
            return value
        }
    }

    /// The base board with edits applied, as bytes.
    static func bytes(_ edits: [([String], JSONValue?)]) -> [UInt8] {
        var value = base
        for (path, replacement) in edits { value = setting(value, path, to: replacement) }
        return Array(value.serialized().utf8)
    }

    static func actuator(_ key: String, _ value: JSONValue?) -> ([String], JSONValue?) { (["actuators", "0", key], value) }
    static func limit(_ key: String, _ value: JSONValue?) -> ([String], JSONValue?) { (["actuators", "0", "limits", key], value) }
    static func pwm(_ key: String, _ value: JSONValue?) -> ([String], JSONValue?) { (["actuators", "0", "pwm", key], value) }
    static func gpio(_ key: String, _ value: JSONValue?) -> ([String], JSONValue?) { (["actuators", "0", "gpio", key], value) }
}

@Suite("GPIO: board files parse into the model and every mistake is named")
struct GPIOBoardFileTests {
    static let examples = TestSupport.packageRoot + "/Hardware/boards"

    @Test("the example DRV2603 board: a 175 Hz LRA behind a driver IC with its enable line")
    func drv2603Example() throws {
        let board = try BoardFile.load(path: Self.examples + "/rpi-drv2603-lra.json")
        #expect(board.name == "rpi-drv2603")
        let lra = try #require(board.actuators.first)
        #expect(board.deviceID(of: lra) == "gpio:rpi-drv2603:lra")
        #expect(lra.topology == .driverIC)
        #expect(lra.actuator == .lra)
        #expect(lra.gpio?.chip == "gpiochip0")
        #expect(lra.gpio?.enable == LineConfig(reference: .name("GPIO17"), key: "$.actuators[0].gpio.enable"))
        #expect(lra.pwm.chip == "pwmchip0" && lra.pwm.channel == 0)
        #expect(lra.pwm.carrierPeriodNanoseconds == 50_000)
        #expect(lra.driver == DriverICConfig(zeroDuty: 0.5, fullDuty: 1, enableToReadyNanoseconds: 1_000_000))
        #expect(lra.limits.resonantFrequency == 175)
        #expect(lra.limits.ratedLevel == 0.8 && lra.limits.overdriveLevel == 1)
        #expect(lra.limits.overdriveMaxNanoseconds == 12_000_000)
        #expect(lra.limits.maxContinuousNanoseconds == 5_000_000_000)
        #expect(lra.frequencyRange == nil)
        #expect(lra.updateIntervalNanoseconds == 1_000_000)
        #expect(lra.documentedWakeNanoseconds == 1_000_000)
    }

    @Test("the example coin ERM: a transistor stage with a dead zone, no lines")
    func coinERMExample() throws {
        let board = try BoardFile.load(path: Self.examples + "/rpi-coin-erm.json")
        let erm = try #require(board.actuators.first)
        #expect(board.deviceID(of: erm) == "gpio:rpi-coin-erm:erm")
        #expect(erm.topology == .ermTransistor && erm.actuator == .erm)
        #expect(erm.gpio == nil)
        #expect(erm.limits.deadZone == 0.25)
        #expect(erm.limits.nominalFrequency == 200)
        #expect(erm.defaultFrequency == 200)
        #expect(erm.limits.restNanoseconds == 50_000_000)
    }

    @Test("the pwm-vibrator and H-bridge examples: direction PWM, direction line and a frequency band")
    func otherExamples() throws {
        let vibrator = try #require(try BoardFile.load(path: Self.examples + "/rpi-pwm-vibrator.json").actuators.first)
        #expect(vibrator.topology == .pwmVibrator)
        #expect(vibrator.pwm.directionChannel == 1 && vibrator.pwm.directionDuty == 0.5)
        #expect(vibrator.gpio?.enable?.reference == .name("GPIO27"))
        let bridge = try #require(try BoardFile.load(path: Self.examples + "/rpi-hbridge-lra.json").actuators.first)
        #expect(bridge.topology == .lraHBridge && bridge.actuator == .lra)
        #expect(bridge.pwm.carrierFrequency == nil)
        #expect(bridge.frequencyRange == 130...260)
        #expect(bridge.gpio?.direction?.reference == .name("GPIO22"))
        // Default update interval: one period at the lowest frequency, 1/130 s.
        #expect(bridge.updateIntervalNanoseconds == 7_692_308)
    }

    @Test("defaults: polarity normal, rest 20 ms, overdrive = rated, 256 steps, 2 ms updates, H-bridge band 0.75–1.5 × f0")
    func defaults() throws {
        let board = try BoardFile.parse(
            BoardJSON.bytes([BoardJSON.limit("overdrive_level", nil), BoardJSON.limit("overdrive_max_ms", nil)]), path: "/x/defaults.json")
        let actuator = board.actuators[0]
        #expect(actuator.pwm.polarity == .normal)
        #expect(actuator.limits.restNanoseconds == 20_000_000)
        #expect(actuator.limits.overdriveLevel == 0.8)
        #expect(actuator.amplitudeSteps == 256)
        #expect(actuator.updateIntervalNanoseconds == 2_000_000)
        #expect(actuator.driver == DriverICConfig())
        let bridge = try BoardFile.parse(
            BoardJSON.bytes([
                BoardJSON.actuator("topology", .string("lra-hbridge")), BoardJSON.actuator("actuator", nil),
                BoardJSON.pwm("frequency_hz", nil),
            ]), path: "/x/bridge.json")
        #expect(bridge.actuators[0].frequencyRange == 131...263)
        let line = try BoardFile.parse(BoardJSON.bytes([BoardJSON.gpio("enable", .object(["line": .number(4), "active_low": .bool(true)]))]), path: "/x/l.json")
        #expect(line.actuators[0].gpio?.enable?.activeLow == true)
        #expect(line.actuators[0].gpio?.enable?.reference == .offset(4))
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var edits: [([String], JSONValue?)]
        var key: String
        var problem: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "format missing", edits: [(["format"], nil)], key: "$.format", problem: "required key is missing"),
        Case(name: "format 2", edits: [(["format"], .number(2))], key: "$.format", problem: "format 2 is not supported"),
        Case(name: "unknown top-level key", edits: [(["boards"], .number(1))], key: "$.boards", problem: "unknown key; allowed keys: format, name"),
        Case(name: "name missing", edits: [(["name"], nil)], key: "$.name", problem: "required key is missing"),
        Case(name: "bad name", edits: [(["name"], .string("My Board"))], key: "$.name", problem: "\"My Board\" is not a valid name"),
        Case(name: "bad board gpio_chip", edits: [(["gpio_chip"], .string("dev/gpiochip0"))], key: "$.gpio_chip", problem: "is not a GPIO chip name"),
        Case(name: "bad board pwm_chip", edits: [(["pwm_chip"], .string("pwm0"))], key: "$.pwm_chip", problem: "\"pwm0\" is not a sysfs PWM chip name"),
        Case(name: "no actuators", edits: [(["actuators"], .array([]))], key: "$.actuators", problem: "holds 0 actuators, allowed 1...16"),
        Case(name: "actuators not an array", edits: [(["actuators"], .number(3))], key: "$.actuators", problem: "expected an array, found number"),
        Case(name: "unknown actuator key", edits: [BoardJSON.actuator("colour", .string("red"))], key: "$.actuators[0].colour", problem: "unknown key"),
        Case(name: "topology missing", edits: [BoardJSON.actuator("topology", nil)], key: "$.actuators[0].topology", problem: "required key is missing"),
        Case(name: "unknown topology", edits: [BoardJSON.actuator("topology", .string("relay"))], key: "$.actuators[0].topology", problem: "\"relay\" is not one of: driver-ic"),
        Case(name: "driver-ic without actuator kind", edits: [BoardJSON.actuator("actuator", nil)], key: "$.actuators[0].actuator", problem: "a driver-ic drives an \"lra\" or an \"erm\""),
        Case(
            name: "erm-transistor declared lra",
            edits: [BoardJSON.actuator("topology", .string("erm-transistor")), BoardJSON.actuator("gpio", nil)], key: "$.actuators[0].actuator",
            problem: "\"lra\" does not fit topology erm-transistor"),
        Case(name: "driver-ic without gpio", edits: [BoardJSON.actuator("gpio", nil)], key: "$.actuators[0].gpio", problem: "a driver-ic needs its enable line"),
        Case(name: "driver-ic without enable line", edits: [BoardJSON.gpio("enable", nil)], key: "$.actuators[0].gpio.enable", problem: "required key is missing"),
        Case(name: "direction line on a driver-ic", edits: [BoardJSON.gpio("direction", .number(5))], key: "$.actuators[0].gpio.direction", problem: "topology driver-ic has no direction line"),
        Case(
            name: "enable and direction on the same line",
            edits: [BoardJSON.actuator("topology", .string("lra-hbridge")), BoardJSON.actuator("actuator", nil), BoardJSON.pwm("frequency_hz", nil), BoardJSON.gpio("direction", .number(17))],
            key: "$.actuators[0].gpio.direction", problem: "line 17 is also the enable line"),
        Case(name: "no gpio chip anywhere", edits: [(["gpio_chip"], nil)], key: "$.actuators[0].gpio.chip", problem: "the board sets no \"gpio_chip\""),
        Case(name: "line offset negative", edits: [BoardJSON.gpio("enable", .number(-1))], key: "$.actuators[0].gpio.enable", problem: "expected a whole number in 0...65535, found -1"),
        Case(name: "line as a boolean", edits: [BoardJSON.gpio("enable", .bool(true))], key: "$.actuators[0].gpio.enable", problem: "expected a line offset, a line name or an object, found boolean"),
        Case(name: "empty line name", edits: [BoardJSON.gpio("enable", .string(""))], key: "$.actuators[0].gpio.enable", problem: "an empty line name"),
        Case(name: "line object without line", edits: [BoardJSON.gpio("enable", .object(["active_low": .bool(true)]))], key: "$.actuators[0].gpio.enable.line", problem: "required key is missing"),
        Case(name: "pwm missing", edits: [BoardJSON.actuator("pwm", nil)], key: "$.actuators[0].pwm", problem: "required key is missing"),
        Case(name: "pwm channel missing", edits: [BoardJSON.pwm("channel", nil)], key: "$.actuators[0].pwm.channel", problem: "required key is missing"),
        Case(name: "pwm channel fractional", edits: [BoardJSON.pwm("channel", .number(1.5))], key: "$.actuators[0].pwm.channel", problem: "expected a whole number in 0...1023, found 1.5"),
        Case(name: "no pwm chip anywhere", edits: [(["pwm_chip"], nil)], key: "$.actuators[0].pwm.chip", problem: "the board sets no \"pwm_chip\""),
        Case(name: "carrier missing", edits: [BoardJSON.pwm("frequency_hz", nil)], key: "$.actuators[0].pwm.frequency_hz", problem: "required key is missing"),
        Case(name: "carrier too high", edits: [BoardJSON.pwm("frequency_hz", .number(2e6))], key: "$.actuators[0].pwm.frequency_hz", problem: "2000000 is outside the allowed range 1...1000000"),
        Case(
            name: "carrier on an H-bridge", edits: [BoardJSON.actuator("topology", .string("lra-hbridge")), BoardJSON.actuator("actuator", nil)],
            key: "$.actuators[0].pwm.frequency_hz", problem: "its PWM period is the drive frequency"),
        Case(name: "bad polarity", edits: [BoardJSON.pwm("polarity", .string("inverted"))], key: "$.actuators[0].pwm.polarity", problem: "\"inverted\" is not one of: normal, inversed"),
        Case(name: "direction PWM on a driver-ic", edits: [BoardJSON.pwm("direction_channel", .number(1))], key: "$.actuators[0].pwm.direction_channel", problem: "topology driver-ic has no direction PWM"),
        Case(
            name: "direction PWM on the amplitude channel",
            edits: [BoardJSON.actuator("topology", .string("pwm-vibrator")), BoardJSON.pwm("direction_channel", .number(0))],
            key: "$.actuators[0].pwm.direction_channel", problem: "0 is also \"channel\""),
        Case(name: "direction duty without channel", edits: [BoardJSON.pwm("direction_duty", .number(0.5))], key: "$.actuators[0].pwm.direction_duty", problem: "set without \"direction_channel\""),
        Case(
            name: "driver section on an ERM transistor",
            edits: [BoardJSON.actuator("topology", .string("erm-transistor")), BoardJSON.actuator("actuator", nil), BoardJSON.actuator("driver", .object(["zero_duty": .number(0)]))],
            key: "$.actuators[0].driver", problem: "only a driver-ic has a \"driver\" section"),
        Case(
            name: "full duty not above zero duty", edits: [BoardJSON.actuator("driver", .object(["zero_duty": .number(0.5), "full_duty": .number(0.52)]))],
            key: "$.actuators[0].driver.full_duty", problem: "0.52 is not above zero_duty 0.5 by at least 0.05"),
        Case(name: "limits missing", edits: [BoardJSON.actuator("limits", nil)], key: "$.actuators[0].limits", problem: "every actuator states its limits"),
        Case(name: "rated level missing", edits: [BoardJSON.limit("rated_level", nil)], key: "$.actuators[0].limits.rated_level", problem: "required key is missing"),
        Case(name: "rated level above 1", edits: [BoardJSON.limit("rated_level", .number(1.5))], key: "$.actuators[0].limits.rated_level", problem: "1.5 is outside the allowed range 0.01...1"),
        Case(name: "overdrive below rated", edits: [BoardJSON.limit("overdrive_level", .number(0.5))], key: "$.actuators[0].limits.overdrive_level", problem: "0.5 is outside the allowed range 0.8...1"),
        Case(name: "unbounded overdrive", edits: [BoardJSON.limit("overdrive_max_ms", nil)], key: "$.actuators[0].limits.overdrive_max_ms", problem: "the kick needs a bound"),
        Case(name: "kick too long", edits: [BoardJSON.limit("overdrive_max_ms", .number(500))], key: "$.actuators[0].limits.overdrive_max_ms", problem: "500 is outside the allowed range 1...200"),
        Case(name: "continuous limit missing", edits: [BoardJSON.limit("max_continuous_ms", nil)], key: "$.actuators[0].limits.max_continuous_ms", problem: "keeps the actuator from overheating"),
        Case(name: "continuous limit too short", edits: [BoardJSON.limit("max_continuous_ms", .number(5))], key: "$.actuators[0].limits.max_continuous_ms", problem: "5 is outside the allowed range 10...600000"),
        Case(name: "LRA without resonance", edits: [BoardJSON.limit("resonant_frequency_hz", nil)], key: "$.actuators[0].limits.resonant_frequency_hz", problem: "an LRA states its resonance"),
        Case(name: "resonance out of range", edits: [BoardJSON.limit("resonant_frequency_hz", .number(5))], key: "$.actuators[0].limits.resonant_frequency_hz", problem: "5 is outside the allowed range 20...1000"),
        Case(name: "nominal frequency on an LRA", edits: [BoardJSON.limit("nominal_frequency_hz", .number(200))], key: "$.actuators[0].limits.nominal_frequency_hz", problem: "is for ERMs"),
        Case(
            name: "resonance on an ERM", edits: [BoardJSON.actuator("actuator", .string("erm"))], key: "$.actuators[0].limits.resonant_frequency_hz",
            problem: "is for LRAs"),
        Case(name: "frequency band on a driver-ic", edits: [BoardJSON.limit("frequency_min_hz", .number(150))], key: "$.actuators[0].limits.frequency_min_hz", problem: "only an lra-hbridge chooses its drive frequency"),
        Case(
            name: "band above resonance",
            edits: [BoardJSON.actuator("topology", .string("lra-hbridge")), BoardJSON.actuator("actuator", nil), BoardJSON.pwm("frequency_hz", nil), BoardJSON.limit("frequency_min_hz", .number(200))],
            key: "$.actuators[0].limits.frequency_min_hz", problem: "200 is above resonant_frequency_hz 175"),
        Case(name: "dead zone on a driver-ic", edits: [BoardJSON.limit("dead_zone", .number(0.1))], key: "$.actuators[0].limits.dead_zone", problem: "topology driver-ic has no dead zone"),
        Case(
            name: "dead zone not below rated",
            edits: [BoardJSON.actuator("topology", .string("erm-transistor")), BoardJSON.actuator("actuator", nil), BoardJSON.actuator("gpio", nil),
                    BoardJSON.limit("resonant_frequency_hz", nil), BoardJSON.limit("dead_zone", .number(0.85))],
            key: "$.actuators[0].limits.dead_zone", problem: "0.85 is not below rated_level 0.8"),
        Case(name: "amplitude steps 1", edits: [BoardJSON.actuator("amplitude_steps", .number(1))], key: "$.actuators[0].amplitude_steps", problem: "expected a whole number in 2...65536, found 1"),
        Case(name: "update interval 0", edits: [BoardJSON.actuator("update_interval_ms", .number(0))], key: "$.actuators[0].update_interval_ms", problem: "0 is outside the allowed range 0.1...1000"),
    ]

    @Test("each invalid board names the file, the key, the value and what is expected", arguments: cases)
    func invalidBoard(_ testCase: Case) {
        let path = "/etc/haptics/boards.d/broken.json"
        let error = #expect(throws: BoardFileError.self) { try BoardFile.parse(BoardJSON.bytes(testCase.edits), path: path) }
        guard let error else { return }
        #expect(error.file == path)
        #expect(error.key == testCase.key, "\(error)")
        #expect(error.problem.contains(testCase.problem), "\(error)")
        #expect(error.description.hasPrefix("\(path): \(testCase.key): "), "\(error)")
        #expect(error.expected != nil, "no expectation given: \(error)")
        #expect(error.description.contains(". Expected: "), "\(error)")
    }

    @Test("not JSON at all: the line and column are named")
    func notJSON() {
        let error = #expect(throws: BoardFileError.self) { try BoardFile.parse(Array("{\"format\": 1,\n  \"name\": }".utf8), path: "/b/x.json") }
        #expect(error?.key == nil)
        #expect(error?.description.hasPrefix("/b/x.json: not valid JSON: line 2, column 11: ") == true, "\(String(describing: error))")
    }

    @Test("two actuators of one board may not share a name, a GPIO line or a PWM channel")
    func sharedHardware() throws {
        let first = BoardJSON.base.object!["actuators"]!.array![0]
        func second(_ edits: [([String], JSONValue?)]) -> JSONValue {
            var value = first
            for (path, replacement) in edits { value = BoardJSON.setting(value, path, to: replacement) }
            return value
        }
        let cases: [(JSONValue, String, String)] = [
            (second([]), "$.actuators[1].name", "\"lra\" is already the name of $.actuators[0]"),
            (second([(["name"], .string("b")), (["pwm", "channel"], .number(1))]), "$.actuators[1].gpio.enable", "line 17 of gpiochip0 is already used at $.actuators[0].gpio.enable"),
            (second([(["name"], .string("b")), (["gpio", "enable"], .number(18))]), "$.actuators[1].pwm.channel", "channel 0 of pwmchip0 is already used at $.actuators[0].pwm.channel"),
        ]
        for (actuator, key, problem) in cases {
            let bytes = Array(BoardJSON.setting(BoardJSON.base, ["actuators"], to: .array([first, actuator])).serialized().utf8)
            let error = #expect(throws: BoardFileError.self) { try BoardFile.parse(bytes, path: "/b/two.json") }
            #expect(error?.key == key, "\(String(describing: error))")
            #expect(error?.problem.contains(problem) == true, "\(String(describing: error))")
        }
        // Different lines and channels are fine.
        let fine = second([(["name"], .string("b")), (["gpio", "enable"], .number(18)), (["pwm", "channel"], .number(1))])
        let board = try BoardFile.parse(Array(BoardJSON.setting(BoardJSON.base, ["actuators"], to: .array([first, fine])).serialized().utf8), path: "/b/ok.json")
        #expect(board.actuators.map { board.deviceID(of: $0) } == ["gpio:test-board:lra", "gpio:test-board:b"])
    }

    @Test("expectations exist for every key the parser accepts")
    func expectationsCoverKeys() {
        for key in [
            "$.format", "$.name", "$.gpio_chip", "$.pwm_chip", "$.actuators", "$.actuators[0].topology", "$.actuators[0].gpio.chip",
            "$.actuators[0].gpio.enable", "$.actuators[0].gpio.direction", "$.actuators[0].pwm.chip", "$.actuators[0].pwm.channel",
            "$.actuators[0].pwm.frequency_hz", "$.actuators[0].pwm.polarity", "$.actuators[0].driver.zero_duty", "$.actuators[0].limits.rated_level",
            "$.actuators[0].limits.max_continuous_ms", "$.actuators[0].limits.dead_zone", "$.actuators[0].amplitude_steps",
        ] {
            #expect(BoardFileKeys.expectation(forPath: key) != nil, "\(key)")
        }
        #expect(BoardFileKeys.expectation(forPath: "$.actuators[0].pwm.chip")!.contains("pwmchip"))
        #expect(BoardFileKeys.expectation(forPath: "$.actuators[0].gpio.chip")!.contains("gpiochip"))
    }
}

@Suite("GPIO: the board search finds files in the standard places and gpio.boards")
struct GPIOBoardSearchTests {
    func write(_ bytes: [UInt8], to path: String) throws {
        try writeFileAtomically(bytes, toPath: path)
    }

    func boardBytes(name: String) -> [UInt8] {
        BoardJSON.bytes([(["name"], .string(name))])
    }

    @Test("locations: /etc first, then $XDG_CONFIG_HOME (else ~/.config), then each gpio.boards entry")
    func locations() {
        let xdg = BoardSearch.standard(setting: "/a.json:/b", environment: ["XDG_CONFIG_HOME": "/home/u/.cfg", "HOME": "/home/u"])
        #expect(xdg.locations.map(\.path) == ["/etc/haptics/boards.d", "/home/u/.cfg/haptics/boards.d", "/a.json", "/b"])
        #expect(xdg.locations.map(\.required) == [false, false, true, true])
        let home = BoardSearch.standard(setting: nil, environment: ["HOME": "/home/u"])
        #expect(home.locations.map(\.path) == ["/etc/haptics/boards.d", "/home/u/.config/haptics/boards.d"])
        let relative = BoardSearch.standard(setting: "", environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/h"])
        #expect(relative.locations.map(\.path) == ["/etc/haptics/boards.d", "/h/.config/haptics/boards.d"])
    }

    @Test("a directory yields its *.json files in name order, hidden and other files skipped; a missing optional directory is skipped")
    func directories() throws {
        let root = TestSupport.makeTemporaryDirectory("gpio-search")
        try write(boardBytes(name: "b-board"), to: root + "/20-b.json")
        try write(boardBytes(name: "a-board"), to: root + "/10-a.json")
        try write(Array("not a board".utf8), to: root + "/README.txt")
        try write(Array("{".utf8), to: root + "/.hidden.json")
        let extra = TestSupport.makeTemporaryDirectory("gpio-extra") + "/c.json"
        try write(boardBytes(name: "c-board"), to: extra)
        let search = BoardSearch(locations: [
            .init(path: root + "/does-not-exist", required: false), .init(path: root, required: true), .init(path: extra, required: true),
            .init(path: root + "/10-a.json", required: true),
        ])
        #expect(try search.files() == [root + "/10-a.json", root + "/20-b.json", extra])
        #expect(search.load().boards.map(\.name) == ["a-board", "b-board", "c-board"])
        #expect(search.load().failures.isEmpty)
    }

    @Test("a missing gpio.boards entry, a broken file and a duplicate board name are each reported, naming the file; the good boards still load")
    func errors() throws {
        let root = TestSupport.makeTemporaryDirectory("gpio-search-errors")
        let missing = BoardSearch(locations: [.init(path: root + "/nope.json", required: true)])
        let error = #expect(throws: BoardFileError.self) { try missing.files() }
        #expect(error?.description == "gpio.boards entry \(root)/nope.json: cannot read: No such file or directory. Expected: an existing board file or directory")

        try write(boardBytes(name: "same"), to: root + "/1.json")
        try write(boardBytes(name: "same"), to: root + "/2.json")
        try write(BoardJSON.bytes([(["name"], .string("bad")), BoardJSON.limit("rated_level", .number(2))]), to: root + "/3-bad.json")
        try write(boardBytes(name: "good"), to: root + "/4-good.json")
        let loaded = BoardSearch(locations: [.init(path: root, required: true), .init(path: root + "/nope.json", required: true)]).load()
        #expect(loaded.boards.map(\.name) == ["same", "good"])
        #expect(loaded.failures.count == 3, "\(loaded.failures)")
        let duplicate = loaded.failures.first { $0.file == root + "/2.json" }
        #expect(duplicate?.key == "$.name")
        #expect(duplicate?.problem == "name \"same\" is also used by \(root)/1.json")
        #expect(duplicate?.expected == "a name no other board file uses (device ids are gpio:BOARD:ACTUATOR and i2c:BOARD:ACTUATOR)")
        let broken = loaded.failures.first { $0.file == root + "/3-bad.json" }
        #expect(broken?.key == "$.actuators[0].limits.rated_level")
        #expect(loaded.failures.contains { $0.file == "gpio.boards entry \(root)/nope.json" })
    }
}
