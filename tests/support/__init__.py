"""What tests of several folders share, imported as a package (`from tests.support.waiting
import until`)."""
