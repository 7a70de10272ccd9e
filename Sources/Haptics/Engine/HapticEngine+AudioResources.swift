/// The clips an engine's patterns can play (Core Haptics' `registerAudioResource`).
struct AudioResources: Sendable {
    /// By the name `AudioCustom` events give as `EventWaveformPath`.
    var byName: [String: AudioClip] = [:]
    /// Each registration's name.
    var names: [UInt64: String] = [:]
    var nextID: UInt64 = 1
}

extension HapticEngine {
    /// Registers `clip` under `name`: from then on, a pattern made into a player whose
    /// `AudioCustom` events give `name` as their `EventWaveformPath` plays it on the engine's
    /// waveform devices (``DeviceDescription/sampleStream``), mixed with the haptic events; motor
    /// devices leave it out. A name registered again takes the new clip for players made after.
    ///
    /// `haptic-cal play` registers each file an AHAP file names, decoded, under the path as the
    /// file writes it (relative paths from the AHAP file's directory).
    ///
    /// Through hapticsd the clip is sent to the service (`RegisterAudio`), where it is this
    /// connection's alone and bounded (Docs/Daemon.md).
    ///
    /// - Throws: through hapticsd, ``HapticEngineError/serviceFailure(name:message:)`` when the
    ///   service refuses it (over its budget; a service that predates clips: `UnknownMethod`).
    @discardableResult
    public func registerAudioResource(_ clip: AudioClip, named name: String) throws(HapticEngineError) -> AudioResourceID {
        if let remote { return AudioResourceID(rawValue: try remote.client.registerAudio(clip, named: name)) }
        return audioResources.withLock { resources in
            let id = resources.nextID
            resources.nextID += 1
            if let previous = resources.names.first(where: { $0.value == name })?.key { resources.names[previous] = nil }
            resources.byName[name] = clip
            resources.names[id] = name
            return AudioResourceID(rawValue: id)
        }
    }

    /// Forgets a registered clip: players made later no longer find it (players made before keep
    /// playing it).
    ///
    /// - Throws: ``HapticEngineError/unknownAudioResource(_:)`` for an id not registered (or
    ///   already unregistered, or replaced by a later registration of its name).
    public func unregisterAudioResource(_ id: AudioResourceID) throws(HapticEngineError) {
        if let remote {
            try remote.client.unregisterAudio(id.rawValue)
            return
        }
        let found = audioResources.withLock { resources -> Bool in
            guard let name = resources.names.removeValue(forKey: id.rawValue) else { return false }
            resources.byName[name] = nil
            return true
        }
        if !found { throw .unknownAudioResource(id) }
    }
}
