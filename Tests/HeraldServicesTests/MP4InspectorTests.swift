import Foundation
import HeraldServices
import HeraldTestSupport
import Testing

/// The box parser against fixtures with known values, variants of the box format, and
/// hostile bytes: every answer is an `MP4Info` or an `MP4Error`, never a trap.
@Suite struct MP4InspectorTests {
    /// The `MP4Error` that `data` is refused with, or nil when it parses.
    private func mp4Error(_ data: Data) -> MP4Error? {
        do {
            _ = try MP4Inspector.inspect(data)
            return nil
        } catch let error as MP4Error {
            return error
        } catch {
            Issue.record("not an MP4Error: \(error)")
            return nil
        }
    }

    /// The offset of the first occurrence of `code` in `data`.
    private func offset(of code: String, in data: Data) throws -> Int {
        let range = try #require(data.range(of: Data(code.utf8)))
        return range.lowerBound - data.startIndex
    }

    /// `data` with the top-level box at `offset` rewritten to use a 64-bit largesize.
    private func withLargeSize(boxAt offset: Int, in data: Data) -> Data {
        let bytes = [UInt8](data)
        let size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
        var large = Data(bytes[..<offset]) + Data([0, 0, 0, 1]) + Data(bytes[offset + 4..<offset + 8])
        large += withUnsafeBytes(of: UInt64(size + 8).bigEndian) { Data($0) }
        return large + Data(bytes[(offset + 8)...])
    }

    @Test func aValidFileReadsBackExactly() throws {
        let data = MP4Fixture.make(duration: 2, width: 640, height: 360, fps: 30, brand: "isom", mdatBytes: 1000)
        let info = try MP4Inspector.inspect(data)
        #expect(info.majorBrand == "isom")
        #expect(info.minorVersion == 512)
        #expect(info.compatibleBrands == ["isom", "mp41"])
        #expect(info.duration == 2)
        #expect(info.width == 640)
        #expect(info.height == 360)
        #expect(info.frameRate == 30)
        #expect(info.frameCount == 60)
        #expect(info.trackHandlers == ["vide"])
        #expect(info.audioChannelCounts.isEmpty)
        #expect(info.byteCount == data.count)
    }

    @Test func version1BoxesUse64BitTimes() throws {
        let data = MP4Fixture.make(duration: 12.345, width: 1280, height: 720, fps: 23.976, brand: "mp42", version: 1)
        for type in ["mvhd", "tkhd", "mdhd"] {
            #expect(data[try offset(of: type, in: data) + 4] == 1, "\(type) is version 1")
        }
        let info = try MP4Inspector.inspect(data)
        #expect(info.majorBrand == "mp42")
        #expect(info.duration == 12.345)
        #expect(info.width == 1280 && info.height == 720)
        #expect(info.frameRate == 23.976)
        // A duration past 32 bits of milliseconds only fits a version-1 mvhd.
        let long = try MP4Inspector.inspect(MP4Fixture.make(duration: 5_000_000, fps: 1, mdatBytes: 0, version: 1))
        #expect(long.duration == 5_000_000)
    }

    @Test func largeSizeAndSizeZeroBoxesAreFollowed() throws {
        let large = MP4Fixture.make(mdatBytes: 300, mdatSize: .large)
        #expect(try MP4Inspector.inspect(large).byteCount == large.count)
        let toEnd = MP4Fixture.make(mdatBytes: 300, mdatSize: .toEnd)
        #expect(try MP4Inspector.inspect(toEnd).duration == 2)
        let plain = MP4Fixture.make()
        let largeMoov = withLargeSize(boxAt: try offset(of: "moov", in: plain) - 4, in: plain)
        #expect(largeMoov.count == plain.count + 8)
        let info = try MP4Inspector.inspect(largeMoov)
        #expect(info.width == 640 && info.frameRate == 30)
    }

    @Test func theVideoTrackIsPickedBesideAnAudioTrack() throws {
        let info = try MP4Inspector.inspect(MP4Fixture.make(width: 480, height: 270, fps: 25, audioChannels: 2))
        #expect(info.trackHandlers == ["soun", "vide"])
        #expect(info.width == 480 && info.height == 270)
        #expect(info.frameRate == 25)
        #expect(info.audioChannelCounts == [2])
    }

    @Test func aSliceOfLargerDataParsesLikeItsCopy() throws {
        let data = MP4Fixture.make(audioChannels: 1)
        let padded = Data([9, 9, 9]) + data + Data([7])
        #expect(try MP4Inspector.inspect(padded[3..<(3 + data.count)]) == MP4Inspector.inspect(data))
    }

    @Test func aFileIsReadWithoutItsSampleDataAndMatchesTheBytes() throws {
        let data = MP4Fixture.make(mdatBytes: 50_000, audioChannels: 2, mdatSize: .toEnd)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("herald-mp4-\(UUID().uuidString).mp4")
        try data.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(try MP4Inspector.inspect(contentsOf: url) == MP4Inspector.inspect(data))
        let tooSmall = #expect(throws: MP4Error.self) { try MP4Inspector.inspect(contentsOf: url, maxMetadataBytes: 100) }
        #expect(tooSmall?.message.contains("over the 100-byte limit") == true)
        let missing = #expect(throws: MP4Error.self) { try MP4Inspector.inspect(contentsOf: url.appendingPathExtension("gone")) }
        #expect(missing?.kind == .unreadable)
    }

    @Test func bytesWithoutFtypAreNotMP4() {
        for data in [Data(), Data("hello, not a video".utf8), Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13])] {
            let error = mp4Error(data)
            #expect(error?.kind == .notMP4)
            #expect(error?.message == "not an MP4 file: no ftyp box at offset 0")
        }
    }

    @Test func errorsNameTheBoxAndItsOffset() throws {
        let data = MP4Fixture.make(mdatBytes: 10)
        let moov = try offset(of: "moov", in: data) - 4
        // moov claims far more than the file holds.
        var overlong = data
        overlong.replaceSubrange(moov..<moov + 4, with: [0, 1, 0x86, 0x9F])  // 99999
        #expect(mp4Error(overlong)?.message == "box 'moov' at offset \(moov) claims 99999 bytes but only \(data.count - moov) remain")
        // A box smaller than its own header.
        var tiny = data
        tiny.replaceSubrange(moov..<moov + 4, with: [0, 0, 0, 3])
        #expect(mp4Error(tiny)?.message == "box 'moov' at offset \(moov) claims 3 bytes, less than its 8-byte header")
        // No video handler: the tracks found are listed.
        var noVideo = data
        let handler = try offset(of: "vide", in: data)
        noVideo.replaceSubrange(handler..<handler + 4, with: Data("text".utf8))
        #expect(mp4Error(noVideo)?.message == "no video track ('hdlr' type 'vide') in 'moov' at offset \(moov); tracks: text")
        // An stts entry count far beyond the box.
        var entries = data
        let stts = try offset(of: "stts", in: data) - 4
        entries.replaceSubrange(stts + 12..<stts + 16, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(mp4Error(entries)?.message == "'stts' at offset \(stts) lists 4294967295 entries but has room for 2")
        // An unknown full-box version.
        var version = data
        let mvhd = try offset(of: "mvhd", in: data) - 4
        version[mvhd + 8] = 2
        #expect(mp4Error(version)?.message == "'mvhd' at offset \(mvhd) has version 2; only 0 and 1 are defined")
        // No moov at all.
        let ftypOnly = data.prefix(try offset(of: "moov", in: data) - 4)
        #expect(mp4Error(ftypOnly)?.kind == .missingBox)
    }

    @Test func everyTruncationOfASmallFileIsAnErrorNotATrap() throws {
        let data = MP4Fixture.make(duration: 1, width: 64, height: 48, fps: 10, mdatBytes: 16, version: 1, audioChannels: 2)
        // Cut just before mdat, the file is whole boxes without sample data: that one parses.
        let mdat = try offset(of: "mdat", in: data) - 4
        var kinds: Set<MP4Error.Kind> = []
        for length in 0..<data.count {
            guard let error = mp4Error(data.prefix(length)) else {
                #expect(length == mdat, "a \(length)-byte prefix of \(data.count) parsed")
                continue
            }
            kinds.insert(error.kind)
        }
        #expect(kinds == [.notMP4, .truncated, .missingBox])
        #expect(mp4Error(data) == nil)
    }

    @Test func seededBitFlipsNeverTrap() throws {
        let data = MP4Fixture.make(duration: 3, width: 320, height: 240, fps: 25, mdatBytes: 8, audioChannels: 2)
        var random = SeededGenerator(seed: 0x4D50_3446)
        var parsed = 0
        var refused = 0
        for _ in 0..<3000 {
            var bytes = [UInt8](data)
            for _ in 0..<(1 + random.next() % 4) {
                let bit = Int(random.next() % UInt64(bytes.count * 8))
                bytes[bit / 8] ^= 1 << UInt8(bit % 8)
            }
            if mp4Error(Data(bytes)) == nil { parsed += 1 } else { refused += 1 }
        }
        // Both outcomes occur: flips in sample data or times still parse, flips in sizes do not.
        #expect(parsed > 0)
        #expect(refused > 0)
    }

    @Test func seededSplicesNeverTrap() {
        let data = [UInt8](MP4Fixture.make(duration: 1, width: 64, height: 64, fps: 12, mdatBytes: 4, version: 1, audioChannels: 1))
        var random = SeededGenerator(seed: 0x5350_4C49)
        var refused = 0
        for _ in 0..<2000 {
            var bytes = data
            let start = Int(random.next() % UInt64(bytes.count))
            let end = min(bytes.count, start + 1 + Int(random.next() % 64))
            // Delete a range, or repeat it in place: sizes now point into the wrong boxes.
            if random.next() % 2 == 0 { bytes.removeSubrange(start..<end) } else { bytes.insert(contentsOf: bytes[start..<end], at: start) }
            if mp4Error(Data(bytes)) != nil { refused += 1 }
        }
        #expect(refused > 1000)
    }
}
