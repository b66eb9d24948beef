/// The subset of the BaaS query language the sandbox understands: equality and the
/// `$eq $ne $gt $gte $lt $lte $in $exists` operators; `order` keys with `-` for descending.
enum BaaSQueryMatcher {
    static func matches(_ value: SandboxJSON?, _ condition: SandboxJSON) -> Bool {
        guard case .object(let operators) = condition, operators.allSatisfy({ $0.0.hasPrefix("$") }) else {
            return value == condition
        }
        return operators.allSatisfy { name, operand in
            switch name {
            case "$eq": return value == operand
            case "$ne": return value != operand
            case "$gt": return value.map { less(operand, $0) } ?? false
            case "$gte": return value.map { !less($0, operand) } ?? false
            case "$lt": return value.map { less($0, operand) } ?? false
            case "$lte": return value.map { !less(operand, $0) } ?? false
            case "$in":
                if case .array(let options) = operand { return value.map { options.contains($0) } ?? false }
                return false
            case "$exists":
                if case .bool(let wanted) = operand { return (value != nil) == wanted }
                return false
            default: return false
            }
        }
    }

    static func less(_ lhs: SandboxJSON, _ rhs: SandboxJSON) -> Bool {
        let (left, right) = (lhs.sortKey, rhs.sortKey)
        if let a = left.0, let b = right.0 { return a < b }
        return left.1 < right.1
    }

    static func ordered(_ lhs: SandboxJSON, _ rhs: SandboxJSON, by keys: [String]) -> Bool {
        for key in keys where !key.isEmpty {
            let descending = key.hasPrefix("-")
            let name = descending ? String(key.dropFirst()) : key
            let (a, b) = (lhs[name] ?? .null, rhs[name] ?? .null)
            if a == b { continue }
            return descending ? less(b, a) : less(a, b)
        }
        return false
    }
}
