// Types from HapticsSupport that appear in the public API (AHAP metadata, errors): re-export just those.
@_exported import enum HapticsSupport.JSONValue
@_exported import struct HapticsSupport.JSONObject
@_exported import struct HapticsSupport.JSONSyntaxError
@_exported import struct HapticsSupport.JSONPathError
@_exported import struct HapticsSupport.FileError
// The stream of an audio capture, shared with the backends through the plugin contract (ABI 1.9).
@_exported import struct HapticsSupport.AudioCaptureFormat
// The adaptive-trigger effects, shared with the backends through the plugin contract.
@_exported import enum HapticsTriggers.AdaptiveTriggerEffect
@_exported import enum HapticsTriggers.AdaptiveTriggerError
@_exported import enum HapticsTriggers.TriggerParameter
@_exported import struct HapticsTriggers.TriggerEngagement
