//! Monitors recorded while a run goes (filled in next).
