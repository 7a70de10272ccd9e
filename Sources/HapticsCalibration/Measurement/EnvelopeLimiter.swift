import Haptics

extension DriveEnvelope {
    /// The largest amplitude a kick passes (its level is ``kickLevel``).
    public var kickAmplitudeLimit: Double { amplitude(forLevel: kickLevel) }

    /// The envelope calibration drives `device` through, from its description: the backend's own,
    /// or, for a device that takes frames of levels, the same limits with no offset (calibration
    /// measures it from zero, ``CalibrationProfile/DriveScale/level``); nil when the backend passes
    /// amplitudes through unchanged (or does not say).
    public static func of(_ device: DeviceDescription) -> DriveEnvelope? {
        guard let envelope = device.envelope else { return nil }
        let measured = envelope.acceptsLevels ? envelope.forLevels : envelope
        return measured == .passThrough || measured == DriveEnvelope(acceptsLevels: true) ? nil : measured
    }
}

extension DriveEnvelope {
    /// What the hardware receives for `schedule` (engine amplitudes): each non-zero amplitude lifted
    /// over the offset, held at the rated level after the kick window of each drive (a run of
    /// non-zero requests whose gaps are shorter than the rest time), and cut to 0 after the
    /// continuous-drive limit until a rest. The levels (0…1 of full scale) replace the amplitudes.
    ///
    /// This is the GPIO backend's limiter, for simulations that do not run it (the recording backend
    /// passes frames through): it lets a model of a board's hardware see what the board would send.
    public func limited(_ schedule: DriveSchedule) -> DriveSchedule {
        let channelCount = schedule.steps.map(\.channels.count).max() ?? 0
        guard channelCount > 0 else { return schedule }
        // One limiter per channel, driven in time order; the times where a kick ends or a cut falls
        // are added as steps, since the output changes there without a new request.
        struct State {
            var driveStart: Double?
            var zeroSince: Double? = 0
            var cut = false
            var request = ChannelDrive.off
        }
        var states = [State](repeating: State(), count: channelCount)
        var times = Set(schedule.steps.map(\.time))
        var requests: [(time: Double, channels: [ChannelDrive])] = schedule.steps.map { ($0.time, $0.channels) }
        var output: [DriveSchedule.Step] = []
        var index = 0
        var pending = times.sorted()
        while !pending.isEmpty {
            let time = pending.removeFirst()
            while index < requests.count, requests[index].time <= time {
                for (channel, drive) in requests[index].channels.enumerated() { states[channel].request = drive }
                index += 1
            }
            var channels: [ChannelDrive] = []
            for channel in 0..<channelCount {
                var state = states[channel]
                let request = level(forAmplitude: state.request.amplitude)
                var level = 0.0
                if request > 0 {
                    if let since = state.zeroSince {
                        if state.driveStart == nil || time - since >= restDuration {
                            state.driveStart = time
                            state.cut = false
                        }
                        state.zeroSince = nil
                    }
                    let start = state.driveStart ?? time
                    if let limit = maxContinuousDuration, time >= start + limit { state.cut = true }
                    if !state.cut {
                        let kickEnd = start + kickDuration
                        level = min(request, time < kickEnd ? kickLevel : ratedLevel)
                        for boundary in [kickEnd, start + (maxContinuousDuration ?? .infinity)] where boundary > time && boundary.isFinite {
                            if times.insert(boundary).inserted {
                                pending.append(boundary)
                                pending.sort()
                            }
                        }
                    }
                } else if state.zeroSince == nil {
                    state.zeroSince = time
                }
                states[channel] = state
                channels.append(ChannelDrive(amplitude: level, frequency: state.request.frequency))
            }
            output.append(DriveSchedule.Step(time: time, channels: channels))
        }
        requests.removeAll()
        return DriveSchedule(steps: output)
    }
}
