// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @notice A 6-decimal test dollar that can take a fee on every transfer, as some real tokens
/// do (or start to, after an upgrade): the sender is debited the whole amount and the receiver
/// credited the amount less `feeBps`, the fee burnt. Mints are fee-free and open, as for
/// TestCollateral.
contract FeeCollateral is ERC20 {
    uint256 public feeBps;

    constructor() ERC20("Fee USD", "fUSD") {}

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    /// @notice Anyone may set it: the tests play the token's own admin.
    function setFeeBps(uint256 bps) external {
        require(bps <= 10_000, "fee above 100 %");
        feeBps = bps;
    }

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    function _update(address from, address to, uint256 value) internal override {
        if (from == address(0) || to == address(0) || feeBps == 0) {
            super._update(from, to, value);
            return;
        }
        uint256 fee = value * feeBps / 10_000;
        super._update(from, to, value - fee);
        super._update(from, address(0), fee);
    }
}

/// @notice A 6-decimal test dollar that calls back into a hook on every transfer to or from
/// `hooked`: a collateral whose transfers run someone else's code (ERC-777 style), for the
/// reentrancy attack.
contract CallbackCollateral is ERC20 {
    address public hooked;
    address public hook;

    constructor() ERC20("Hook USD", "hUSD") {}

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    function setHook(address hooked_, address hook_) external {
        hooked = hooked_;
        hook = hook_;
    }

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    function _update(address from, address to, uint256 value) internal override {
        super._update(from, to, value);
        if (hook != address(0) && from == hooked && to != address(0)) {
            ITransferHook(hook).onTransfer(from, to, value);
        }
    }
}

interface ITransferHook {
    function onTransfer(address from, address to, uint256 value) external;
}
