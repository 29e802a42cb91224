// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title TestCollateral
/// @notice A 6-decimal test dollar for anvil and tests. `mint` is open to anyone: it is a local
/// faucet and must never be deployed where its balance means money.
contract TestCollateral is ERC20 {
    constructor() ERC20("Test USD", "tUSD") {}

    /// @notice Mints `amount` base units (1e6 = one tUSD) to `to`. Anyone may call it.
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    /// @inheritdoc ERC20
    function decimals() public pure override returns (uint8) {
        return 6;
    }
}
