import Foundation

/// Finds a field named twice in one object of a JSON document. `JSONDecoder` keeps one of the two
/// values and says nothing, so a plan file that names a field twice would be read as something its
/// author may not have meant (`MigrationPlanFile` refuses it instead).
enum JSONDuplicateFields {
    /// One open object or array while the document is read.
    private enum Frame {
        /// An object: the fields named so far, the last one, and whether a field name comes next.
        case object(fields: Set<String>, last: String?, nameNext: Bool)
        /// An array: the index of the element being read.
        case array(index: Int)
    }

    /// The first field named twice in one object of `data`, with the place of that object
    /// (`sources[0].tables[1]`, or `the document` for the root); nil when there is none. `data` is
    /// a document `JSONDecoder` read: names are compared after their escapes are undone.
    static func first(in data: Data) -> (location: String, field: String)? {
        let bytes = [UInt8](data)
        var stack: [Frame] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "{"):
                stack.append(.object(fields: [], last: nil, nameNext: true))
            case UInt8(ascii: "["):
                stack.append(.array(index: 0))
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                _ = stack.popLast()
            case UInt8(ascii: ","):
                switch stack.last {
                case .object(let fields, let last, _)?: stack[stack.count - 1] = .object(fields: fields, last: last, nameNext: true)
                case .array(let element)?: stack[stack.count - 1] = .array(index: element + 1)
                case nil: break
                }
            case UInt8(ascii: "\""):
                let start = index
                index += 1
                while index < bytes.count && bytes[index] != UInt8(ascii: "\"") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                guard case .object(var fields, _, true)? = stack.last else { break }
                let raw = Data(bytes[start..<min(index + 1, bytes.count)])
                let name = (try? JSONDecoder().decode(String.self, from: raw)) ?? String(decoding: raw, as: UTF8.self)
                if fields.contains(name) { return (location(of: stack.dropLast()), name) }
                fields.insert(name)
                stack[stack.count - 1] = .object(fields: fields, last: name, nameNext: false)
            default:
                break
            }
            index += 1
        }
        return nil
    }

    /// The place of the value the innermost of `frames` is reading, as `MigrationPlanFile` names it.
    private static func location(of frames: ArraySlice<Frame>) -> String {
        var text = ""
        for frame in frames {
            switch frame {
            case .object(_, let last, _): text += (text.isEmpty ? "" : ".") + (last ?? "")
            case .array(let element): text += "[\(element)]"
            }
        }
        return text.isEmpty ? "the document" : text
    }
}
