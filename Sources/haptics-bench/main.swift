import Haptics
