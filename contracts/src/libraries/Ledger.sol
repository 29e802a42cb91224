// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IRiskGate} from "../interfaces/IRiskGate.sol";
import {GateRules} from "./GateRules.sol";
import {Verdict, Verdicts} from "./GateTypes.sol";

/// @title Ledger
/// @notice RiskGate's positions and its account of them: open notional `N`, the high-water mark
/// `H` and the accounted equity `K`, kept so that no money movement changes `H - equity`
/// (docs/lifetime-bound.md). The gate calls it as v4-core's pool manager calls `Pool`: a library
/// over one storage struct, `using Ledger for Ledger.State`.
/// @dev Units: collateral base units throughout. Every sum that can be formed from an outside
/// balance saturates (`GateRules.highWaterMark`); nothing here rounds. It never calls out: the
/// gate makes every external call and holds the reentrancy lock around each entry that writes
/// this state. Internal library functions are jumped to, not inlined, by this compiler setup
/// (each call measured 40 to 120 gas), so the one-line moves that follow a settle (a deposit
/// or withdrawal moving H and K by its amount, a closed position's notional leaving N and K)
/// are written in the gate itself, next to their entry points. The open-position count is not
/// here: it shares a slot with the keeper and the pause flag, which every `submitVerdict` reads.
library Ledger {
    /// @dev Field order is the storage layout (slots 3 to 6 of RiskGate, as before this library
    /// existed): do not reorder.
    struct State {
        /// @dev N: collateral spent on positions that are neither settled nor written off.
        uint256 openNotional;
        /// @dev H: peak equity, plus every deposit and donation since, minus every withdrawal.
        uint256 highWaterMark;
        mapping(address market => IRiskGate.Position) positions;
        /// @dev K: the equity the gate's own account says it has, collateral it should hold plus
        /// N. A buy moves collateral into notional and leaves K unchanged, so a PASS never
        /// writes it. Settling compares it with balance + N: a surplus is a donation (H rises by
        /// it), a deficit a loss.
        uint256 accountedEquity;
    }

    // --- positions

    /// @notice The verdict whose buys made the position in `market`: BUY_UP, BUY_DOWN, or
    /// ABSTAIN when there is none (a market holds one side only, rule 17).
    function heldSide(State storage self, address market) internal view returns (Verdict) {
        IRiskGate.Position storage pos = self.positions[market];
        if (pos.upUnits != 0) return Verdicts.BUY_UP;
        if (pos.downUnits != 0) return Verdicts.BUY_DOWN;
        return Verdicts.ABSTAIN;
    }

    /// @notice Books a fill: `filled` units of `side` bought for `spent`; N grows by `spent`, K
    /// does not change (collateral became notional one for one). Returns whether the market
    /// had no position before, so the caller counts a new slot.
    function recordBuy(
        State storage self,
        address market,
        Verdict side,
        uint256 filled,
        uint256 spent
    ) internal returns (bool opened) {
        IRiskGate.Position storage pos = self.positions[market];
        opened = pos.upUnits == 0 && pos.downUnits == 0;
        if (side == Verdicts.BUY_UP) pos.upUnits += filled;
        else pos.downUnits += filled;
        pos.notional += spent;
        self.openNotional += spent;
    }

    // --- settling

    /// @notice The account settled against `balance`, without storing it: equity is
    /// balance + N (saturating); a surplus over K raises H by exactly its amount (a donation,
    /// never a refill of the drawdown budget); then H = max(H, equity). `storedHwm` and
    /// `openNotional` are H and N as the caller read them (a snapshot has both already; reading
    /// them again cost 100 gas each). Returns the new H and the new K.
    function settled(State storage self, uint256 balance, uint256 storedHwm, uint256 openNotional)
        internal
        view
        returns (uint256 hwm, uint256 accounted)
    {
        uint256 equity = GateRules.highWaterMark(0, balance, openNotional);
        uint256 storedK = self.accountedEquity;
        hwm = storedHwm;
        if (equity > storedK) hwm = GateRules.highWaterMark(0, hwm, equity - storedK);
        accounted = equity;
        if (equity > hwm) hwm = equity;
    }

    /// @notice Settles the account against `balance` and stores what changed: a surplus is a
    /// donation (`Donated`), a deficit a loss (`Shortfall`), and a new H is announced. Every path
    /// that reads the balance to raise H comes through here, so no inflow can lift equity
    /// without lifting H by as much. `storedHwm` and `openNotional` as in `settled`. Returns the
    /// settled H and K, as now stored.
    function settle(State storage self, uint256 balance, uint256 storedHwm, uint256 openNotional)
        internal
        returns (uint256 hwm, uint256 accounted)
    {
        uint256 storedK = self.accountedEquity;
        // The formula of `settled`, written out: calling it cost 41 gas on every decision that
        // reads the book (forge gas test, refusal of reason 5). Keep the two identical.
        uint256 equity = GateRules.highWaterMark(0, balance, openNotional);
        hwm = storedHwm;
        if (equity > storedK) hwm = GateRules.highWaterMark(0, hwm, equity - storedK);
        accounted = equity;
        if (equity > hwm) hwm = equity;
        if (accounted != storedK) {
            self.accountedEquity = accounted;
            if (accounted > storedK) {
                emit IRiskGate.Donated(accounted - storedK, hwm);
            } else {
                emit IRiskGate.Shortfall(storedK - openNotional, balance);
            }
        }
        if (hwm != storedHwm) {
            self.highWaterMark = hwm;
            emit IRiskGate.HighWaterMark(hwm);
        }
    }
}
