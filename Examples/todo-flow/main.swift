// Seed 004: a todo list on a BaaS bucket. List sorted by updatedAt, add, delete, reload; every
// change is an event on the bus, and the list is printed from the loader's events.
//
//     swift run todo-flow
import Foundation
import Herald
import HeraldLoaders
import HeraldSandbox
import HeraldServices

/// `todo.added` / `todo.deleted`: a change made by this program.
struct TodoChanged: Event {
    var change: String
    var id: String
    var text: String
    var topic: Topic { change == "added" ? "todo.added" : "todo.deleted" }
}

let sandbox = try await Sandbox.start()
let settings = sandbox.configuration
let baas = BaaSClient(configuration: BaaSConfiguration(
    endpoint: sandbox.baseURL, tenantID: settings.baasTenant, applicationID: settings.baasApplicationID,
    applicationKey: settings.baasApplicationKey), transport: SchemeRoutingTransport())
let bus = EventBus()
let list = try TodoLoader(id: "todos", client: baas, bucket: "todos", bus: bus)

let screen = try bus.subscribe(to: TodosLoaded.self) { event in
    print("list (\(event.todos.count), oldest update first):")
    for todo in event.todos {
        print("  - \(todo.todoDescription ?? "?")\(event.newTodos.contains { $0.id == todo.id } ? "  (new)" : "")")
    }
    if !event.removedIDs.isEmpty { print("  (\(event.removedIDs.count) removed)") }
}
let changes = try bus.subscribe(to: TodoChanged.self) { print("\($0.topic): \($0.text)") }
let failures = try bus.subscribe(to: LoadFailed.self) { print("reload failed: \($0.error)") }

func add(_ text: String) async throws -> BaaSObject {
    let object = try await baas.create(bucket: "todos", fields: ["description": .string(text)])
    try await bus.publish(TodoChanged(change: "added", id: object.id, text: text))
    _ = await list.load()
    return object
}

_ = await list.load()
let milk = try await add("Buy milk")
_ = try await add("Write the Herald docs")
try await baas.delete(bucket: "todos", id: milk.id, etag: milk.etag)
try await bus.publish(TodoChanged(change: "deleted", id: milk.id, text: "Buy milk"))
_ = await list.load()

withExtendedLifetime([screen, changes, failures]) {}
_ = await bus.shutdown()
await sandbox.stop()
