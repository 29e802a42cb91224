// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title IVerdictSource
/// @notice What a consensus gate needs of its verdict source: the one gate it was made for. The
/// source is deployed first, naming the gate's address to come; the gate's constructor refuses a
/// source made for another gate, so neither can be paired with a look-alike afterwards. The source applies the consensus
/// mode's read bounds; the gate's constructor checks they are the ones it was given.
interface IVerdictSource {
    /// @notice The only gate this source submits to.
    function gate() external view returns (address);

    /// @notice The most blocks an answer may come after the read its prompt was built from.
    function maxReadAge() external view returns (uint32);

    /// @notice Above the read's best price of the side bought, in basis points of it: the most
    /// the gate may pay.
    function maxSlippageBps() external view returns (uint16);
}
