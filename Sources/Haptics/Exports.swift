// The JSON value types appear in the public API (AHAP metadata); re-export just those.
@_exported import enum HapticsSupport.JSONValue
@_exported import struct HapticsSupport.JSONObject
