import Dispatch
import Foundation
import Herald

import HeraldTestSupport
import Synchronization
import Testing
import HeraldSync

// MARK: Events used by the tests

struct LoadFinished: Event, Equatable {
    var loader: String
    var count: Int
    var topic: Topic { (try? Topic(tokens: "loader", loader, "finished")) ?? "invalid topic" }
}

struct LoadFailed: Event, Equatable {
    var loader: String
    var reason: String
    var topic: Topic { (try? Topic(tokens: "loader", loader, "failed")) ?? "invalid topic" }
}

struct Tick: Event, Equatable {
    static let topic: Topic = "test.tick"
    var topic: Topic { Self.topic }
    var publisher: Int = 0
    var number: Int
}

struct Note: Event, Equatable {
    var topic: Topic
    var text: String = ""
}

struct Boom: Error, CustomStringConvertible {
    var description: String { "boom" }
}

// MARK: Recording and waiting: HeraldTesting's Recording, HeraldTestSupport's Locked

