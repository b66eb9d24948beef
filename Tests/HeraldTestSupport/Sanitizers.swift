#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which sanitizers the test process (and the products built with it) runs under.
public enum Sanitizers {
    /// True under `swift test --sanitize=thread`: the sanitizer's runtime is linked in.
    ///
    /// Tests that cap a child's file size (`ulimit -f`) skip themselves then: the sanitizer's
    /// runtime maps files of its own and dies of SIGBUS when the cap is reached, which says
    /// nothing about Herald.
    public static let thread: Bool = {
        #if canImport(Glibc)
        return dlsym(nil, "__tsan_init") != nil
        #else
        return dlsym(UnsafeMutableRawPointer(bitPattern: -2), "__tsan_init") != nil
        #endif
    }()
}
