//! The filesystem lab: image files, loop devices, mkfs, mount, cache drops,
//! cleanup, and comparison campaigns across targets.
