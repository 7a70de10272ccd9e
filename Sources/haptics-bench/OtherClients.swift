// The other clients the races measure beside swift-haptics, loaded with `dlopen` so that building
// the package never needs them: SDL2's rumble (game controller or joystick API) and a bare hidapi
// handle.
import HapticsSupport

#if canImport(Glibc)
import Glibc
#endif

/// Looks up `symbol` in `library` as a C function of type `T`.
func cFunction<T>(_ library: UnsafeMutableRawPointer, _ symbol: String, as type: T.Type) throws -> T {
    guard let pointer = dlsym(library, symbol) else { throw BenchError("dlsym \(symbol): \(String(cString: dlerror()))") }
    return unsafeBitCast(pointer, to: type)
}

/// A bare hidapi handle on the node: `hid_open_path` once, then `hid_write` per sample.
final class HIDAPIClient {
    private let device: OpaquePointer
    private let writeFunction: @convention(c) (OpaquePointer, UnsafePointer<UInt8>, Int) -> Int32
    private let closeFunction: @convention(c) (OpaquePointer) -> Void
    private var closed = false

    init(path: String) throws {
        guard let library = dlopen("libhidapi-hidraw.so.0", RTLD_NOW | RTLD_LOCAL) else {
            throw BenchError("dlopen libhidapi-hidraw.so.0: \(String(cString: dlerror())) (apt-get install libhidapi-hidraw0)")
        }
        let initialize = try cFunction(library, "hid_init", as: (@convention(c) () -> Int32).self)
        let openPath = try cFunction(library, "hid_open_path", as: (@convention(c) (UnsafePointer<CChar>) -> OpaquePointer?).self)
        writeFunction = try cFunction(library, "hid_write", as: (@convention(c) (OpaquePointer, UnsafePointer<UInt8>, Int) -> Int32).self)
        closeFunction = try cFunction(library, "hid_close", as: (@convention(c) (OpaquePointer) -> Void).self)
        _ = initialize()
        guard let device = openPath(path) else { throw BenchError("hid_open_path(\(path)) failed") }
        self.device = device
    }

    func write(_ report: [UInt8]) throws {
        let written = report.withUnsafeBufferPointer { writeFunction(device, $0.baseAddress!, $0.count) }
        guard written == Int32(report.count) else { throw BenchError("hid_write returned \(written)") }
    }

    func close() {
        guard !closed else { return }
        closed = true
        closeFunction(device)
    }
}

/// SDL2's rumble, loaded at run time: the first device of `api` whose name contains `namePart`,
/// opened for rumble. The game controller API (`SDL_GameController*`, SDL's HIDAPI drivers on
/// hidraw) and the joystick API (`SDL_Joystick*`, its evdev code when `SDL_JOYSTICK_HIDAPI=0`)
/// have the same calls under two prefixes.
final class SDLRumble {
    /// Which of SDL's APIs opens the device.
    enum API {
        case gameController, joystick

        /// The functions' prefix.
        var prefix: String { self == .gameController ? "SDL_GameController" : "SDL_Joystick" }
        /// The `SDL_Init` flag: `SDL_INIT_GAMECONTROLLER` (0x2000) or `SDL_INIT_JOYSTICK` (0x200).
        var initFlag: UInt32 { self == .gameController ? 0x2000 : 0x200 }
        /// What a device of the API is called in messages.
        var noun: String { self == .gameController ? "game controller" : "joystick" }
    }

    private let device: OpaquePointer
    private let api: API
    private let rumbleFunction: @convention(c) (OpaquePointer, UInt16, UInt16, UInt32) -> Int32
    private let closeFunction: @convention(c) (OpaquePointer) -> Void
    private let quitFunction: @convention(c) () -> Void
    private let errorFunction: @convention(c) () -> UnsafePointer<CChar>?
    private var closed = false
    /// The device's name as SDL reports it.
    let name: String
    /// SDL's version, `2.26.5`.
    let version: String

    /// Loads SDL, initialises `api` and waits up to 5 s for a device named like `namePart`;
    /// `missingHint` ends the message when none shows up.
    init(_ api: API, namePart: String, missingHint: String = "") throws {
        guard let library = dlopen("libSDL2-2.0.so.0", RTLD_NOW | RTLD_LOCAL) else {
            throw BenchError("dlopen libSDL2-2.0.so.0: \(String(cString: dlerror())) (apt-get install libsdl2-2.0-0, or pass --no-sdl)")
        }
        self.api = api
        let prefix = api.prefix
        let initialize = try cFunction(library, "SDL_Init", as: (@convention(c) (UInt32) -> Int32).self)
        errorFunction = try cFunction(library, "SDL_GetError", as: (@convention(c) () -> UnsafePointer<CChar>?).self)
        let getVersion = try cFunction(library, "SDL_GetVersion", as: (@convention(c) (UnsafeMutablePointer<UInt8>) -> Void).self)
        let count = try cFunction(library, "SDL_NumJoysticks", as: (@convention(c) () -> Int32).self)
        // A joystick SDL has no mapping for is not a game controller.
        let isController =
            api == .gameController ? try cFunction(library, "SDL_IsGameController", as: (@convention(c) (Int32) -> Int32).self) : { _ in 1 }
        let nameForIndex = try cFunction(library, prefix + "NameForIndex", as: (@convention(c) (Int32) -> UnsafePointer<CChar>?).self)
        let open = try cFunction(library, prefix + "Open", as: (@convention(c) (Int32) -> OpaquePointer?).self)
        let hasRumble = try cFunction(library, prefix + "HasRumble", as: (@convention(c) (OpaquePointer) -> Int32).self)
        let update = try cFunction(library, prefix + "Update", as: (@convention(c) () -> Void).self)
        rumbleFunction = try cFunction(library, prefix + "Rumble", as: (@convention(c) (OpaquePointer, UInt16, UInt16, UInt32) -> Int32).self)
        closeFunction = try cFunction(library, prefix + "Close", as: (@convention(c) (OpaquePointer) -> Void).self)
        quitFunction = try cFunction(library, "SDL_Quit", as: (@convention(c) () -> Void).self)
        var parts = [UInt8](repeating: 0, count: 3)
        getVersion(&parts)
        version = parts.map(String.init).joined(separator: ".")
        guard initialize(api.initFlag) == 0 else { throw BenchError("SDL_Init(\(api.noun)): \(String(cString: errorFunction()!))") }
        var found: (Int32, String)?
        let deadline = Monotonic.now() + 5_000_000_000
        while found == nil, Monotonic.now() < deadline {
            update()
            for index in 0..<count() where isController(index) != 0 {
                let name = nameForIndex(index).map { String(cString: $0) } ?? ""
                if name.contains(namePart) { found = (index, name) }
            }
            if found == nil { HIDRace.pause(0.05) }
        }
        guard let (index, name) = found else {
            quitFunction()
            throw BenchError("SDL lists no \(api.noun) named '\(namePart)' (\(count()) joystick(s))\(missingHint)")
        }
        guard let device = open(index) else { throw BenchError("\(prefix)Open: \(String(cString: errorFunction()!))") }
        guard hasRumble(device) != 0 else { throw BenchError("SDL says \(name) has no rumble") }
        self.device = device
        self.name = name
    }

    /// One rumble call: low- and high-frequency motor levels, no time limit.
    func rumble(low: UInt16, high: UInt16) throws {
        guard rumbleFunction(device, low, high, 0) == 0 else {
            throw BenchError("\(api.prefix)Rumble: \(String(cString: errorFunction()!))")
        }
    }

    /// Closes the device and quits SDL (once).
    func close() {
        guard !closed else { return }
        closed = true
        closeFunction(device)
        quitFunction()
    }
}
