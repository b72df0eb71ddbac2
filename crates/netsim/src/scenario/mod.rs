//! Scenario files (filled in next).
