/// A value published on an ``EventBus``.
///
/// An event is `Sendable` (it crosses tasks) and `Codable` (sinks archive it, bridges forward
/// it), and it names the ``Topic`` it is published on. A type usually publishes on one topic:
///
/// ```swift
/// struct CacheCleared: Event {
///     static let topic: Topic = "cache.cleared"
///     var topic: Topic { Self.topic }
/// }
/// ```
///
/// or derives it from its contents, as a loader's events do (`loader.<id>.finished`).
/// Subscribing by type (``EventBus/subscribe(to:on:from:name:delivery:_:)``) delivers the value
/// itself; subscribing by pattern delivers an ``Envelope``.
public protocol Event: Sendable, Codable {
    /// The topic this event is published on.
    var topic: Topic { get }
}
