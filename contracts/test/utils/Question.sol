// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @dev The question every test market asks unless a test is about the question itself: a
/// plausible one, 45 bytes of ASCII (well inside `VenueLimits.MAX_QUESTION_BYTES`, 280).
string constant TEST_QUESTION = "Will ETH close above 3,000 USD on 2027-01-01?";
