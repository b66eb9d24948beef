import Herald
import HeraldServices

/// `loader.<id>.finished` from a ``TiqavLoader``: the images returned and those never seen before.
public struct TiqavLoaded: Event, Hashable {
    /// The loader's id.
    public var loader: String
    /// Every image returned.
    public var images: [TiqavImage]
    /// The images whose ids the loader had not seen before.
    public var newImages: [TiqavImage]
    /// Where the images are served (`<imageBase>/<id>.<ext>`).
    public var imageURLs: [String]

    /// Creates the event.
    public init(loader: String, images: [TiqavImage], newImages: [TiqavImage], imageURLs: [String]) {
        self.loader = loader
        self.images = images
        self.newImages = newImages
        self.imageURLs = imageURLs
    }

    /// `loader.<id>.finished`.
    public var topic: Topic { LoaderTopics.topic(loader, "finished") }
}
