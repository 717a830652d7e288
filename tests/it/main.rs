//! Integration tests: the real `refine-loop` binary against real temporary git repositories.
//! All of them compile into this one test binary.

mod support;
