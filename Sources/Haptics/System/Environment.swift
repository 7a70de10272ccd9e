import CHapticsSystem

/// Reads the process environment (no Foundation needed) with `secure_getenv`: in a set-user-ID or
/// set-group-ID program (or one with file capabilities) every variable reads as unset, so the
/// invoking user cannot point the plugin search path, the backends' settings or the policy at
/// files of their choosing.
enum Environment {
    static func value(_ name: String) -> String? {
        haptics_secure_getenv(name).map { String(cString: $0) }
    }
}
