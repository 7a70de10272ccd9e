import Haptics
import HapticsInteraction
import Testing

@Suite("Interaction: hit regions and magnetism")
struct HitRegionTests {
    let button = PointerTarget(id: "button", frame: Rect(x: 100, y: 100, width: 40, height: 30), shape: .roundedRectangle(cornerRadius: 0))

    @Test("padding is about 12 pt with a bezel and 24 pt without")
    func padding() {
        let bezel = HitRegions(targets: [button])
        #expect(bezel.target(at: Point(x: 151.5, y: 115))?.id == "button")
        #expect(bezel.target(at: Point(x: 152.5, y: 115)) == nil)
        var plain = button
        plain.hasBezel = false
        let regions = HitRegions(targets: [plain])
        #expect(regions.target(at: Point(x: 163.5, y: 115))?.id == "button")
        #expect(regions.target(at: Point(x: 164.5, y: 115)) == nil)
        let custom = HitRegions(targets: [button], parameters: InteractionParameters(paddingWithBezel: 4))
        #expect(custom.target(at: Point(x: 145, y: 115)) == nil)
    }

    @Test("rounded corners and circles bound the region by their shape")
    func shapes() {
        let rounded = PointerTarget(id: "r", frame: Rect(x: 0, y: 0, width: 40, height: 40), shape: .roundedRectangle(cornerRadius: 10))
        let regions = HitRegions(targets: [rounded])
        // 10 pt corner + 12 pt padding: the region's corner is a 22 pt arc around (10, 10).
        #expect(regions.target(at: Point(x: 10 - 15, y: 10 - 15)) != nil)  // 21.2 pt from the arc's centre
        #expect(regions.target(at: Point(x: 10 - 16, y: 10 - 16)) == nil)  // 22.6 pt
        let circle = HitRegions(targets: [PointerTarget(id: "c", frame: Rect(x: 0, y: 0, width: 40, height: 40), shape: .circle)])
        #expect(circle.target(at: Point(x: 20, y: 20 + 31.9)) != nil)
        #expect(circle.target(at: Point(x: 20, y: 20 + 32.1)) == nil)
    }

    @Test("bar buttons get contiguous regions: sweeping across the gap never drops to no target")
    func contiguity() {
        let a = PointerTarget(id: "a", frame: Rect(x: 0, y: 0, width: 40, height: 30), barGroup: "bar")
        let b = PointerTarget(id: "b", frame: Rect(x: 90, y: 0, width: 40, height: 30), barGroup: "bar")
        let bar = HitRegions(targets: [a, b])
        var seen: [String?] = []
        for x in stride(from: 0.0, through: 130, by: 0.5) { seen.append(bar.target(at: Point(x: x, y: 15))?.id) }
        #expect(!seen.contains(nil))
        #expect(bar.target(at: Point(x: 64.9, y: 15))?.id == "a")
        #expect(bar.target(at: Point(x: 65.1, y: 15))?.id == "b")
        // The same buttons outside a bar leave a gap (50 pt apart, 12 pt padding each).
        var loose = [a, b]
        loose[0].barGroup = nil
        loose[1].barGroup = nil
        #expect(HitRegions(targets: loose).target(at: Point(x: 65, y: 15)) == nil)
    }

    @Test("magnetism pulls toward highlight and lift targets' centres, never hover")
    func magnetism() {
        let parameters = InteractionParameters(magnetism: 0.5)
        for style in [PointerTarget.EffectStyle.highlight, .lift, .hover] {
            var target = button
            target.effect = style
            let (frames, events) = PointerModel.process([PointerSample(time: 0, position: Point(x: 104, y: 104))], targets: [target], parameters: parameters)
            if style == .hover {
                #expect(frames[0].displayed == Point(x: 104, y: 104))
                #expect(events.map(\.event) == [.targetEntered(id: "button", magnetic: false)])
            } else {
                #expect(frames[0].displayed == Point(x: 112, y: 109.5))
                #expect(events.map(\.event) == [.targetEntered(id: "button", magnetic: true)])
            }
        }
    }

    @Test("a flick is projected along its trajectory to the magnetic target it reaches")
    func flick() {
        let targets = [
            PointerTarget(id: "near", frame: Rect(x: 300, y: 0, width: 40, height: 40)),
            PointerTarget(id: "far", frame: Rect(x: 880, y: 0, width: 40, height: 40)),
            PointerTarget(id: "wall", frame: Rect(x: 500, y: 0, width: 40, height: 40), effect: .hover),
        ]
        func projected(speed: Double) -> [String?] {
            // 5 samples 10 ms apart moving right at `speed` pt/s along y = 20.
            let samples = (0..<5).map { PointerSample(time: Double($0) * 0.01, position: Point(x: Double($0) * 0.01 * speed, y: 20)) }
            return PointerModel.process(samples, targets: targets).frames.map(\.projectedTarget)
        }
        // 2000 pt/s coasts 998 pt (0.998 per ms): from ~80 pt it passes near, the hover wall, and reaches far.
        #expect(projected(speed: 2000).last == "far")
        // 1000 pt/s coasts 499 pt: it reaches near and stops before the wall.
        #expect(projected(speed: 1000).last == "near")
        // Below the flick speed nothing is projected.
        #expect(projected(speed: 400).allSatisfy { $0 == nil })
        #expect(abs(PointerModel.projection(2000, 0.998) - 998) < 1e-6)
    }

    @Test("over text, small vertical drift keeps the line; a real move changes it")
    func lineKeeping() {
        let text = PointerTarget(id: "text", frame: Rect(x: 0, y: 0, width: 300, height: 200), effect: .beam(lineHeight: 20), hasBezel: false)
        let samples = [(0.0, 50.0, 100.0), (0.1, 60, 108), (0.2, 70, 93), (0.3, 80, 115), (0.4, 90, 117)].map {
            PointerSample(time: $0.0, position: Point(x: $0.1, y: $0.2))
        }
        let frames = PointerModel.process(samples, targets: [text]).frames
        #expect(frames.map(\.displayed.y) == [100, 100, 100, 115, 115])
        #expect(frames.map(\.displayed.x) == [50, 60, 70, 80, 90])
    }
}
