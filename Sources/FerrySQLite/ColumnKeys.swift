/// How the coding keys of a record type name the columns of its table.
public enum ColumnKeys: Sendable, Hashable {
    /// A key is the column's name as written (`conversationID` reads the column `conversationID`;
    /// SQLite matches column names without regard to case).
    case asWritten
    /// A camel-case key names a snake-case column (`conversationId` ↔ `conversation_id`,
    /// `bodyHTML` ↔ `body_html`), as `JSONDecoder.KeyDecodingStrategy.convertFromSnakeCase` reads it.
    case snakeCase

    /// The column a coding key names.
    public func column(for key: String) -> String {
        switch self {
        case .asWritten:
            return key
        case .snakeCase:
            var result = ""
            let characters = Array(key)
            for (index, character) in characters.enumerated() {
                if character.isUppercase {
                    let previous = index > 0 ? characters[index - 1] : nil
                    let next = index + 1 < characters.count ? characters[index + 1] : nil
                    // A new word starts at an upper-case letter after a lower-case one or a digit,
                    // and at the last capital of an acronym followed by a lower-case letter.
                    if let previous, previous.isLowercase || previous.isNumber || (previous.isUppercase && (next?.isLowercase ?? false)) {
                        result.append("_")
                    }
                    result.append(contentsOf: character.lowercased())
                } else {
                    result.append(character)
                }
            }
            return result
        }
    }
}
