// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateVenueBase} from "./GateVenueBase.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {BinaryMarket} from "../../src/venue/BinaryMarket.sol";

/// @notice Positions that never settle, and the high-water mark H: writeOff (who, when, what it
/// releases), redeem after a write-off, withdrawCollateral lowering H, and every place H rises.
/// The standard position: BUY_UP 1_000 units at 0.42 in `market`, 420 spent, expiry EXPIRY,
/// grace 1 day.
contract RiskGateWriteOffTest is GateVenueBase {
    address internal stranger = makeAddr("stranger");

    function _holdUp() internal {
        assertEq(submit(market, "BUY_UP"), 0);
        assertEq(gate.highWaterMark(), GATE_FUNDS, "H = 100_000 + 0 before the purchase");
    }

    // --- writeOff: refusals

    function test_writeOff_revertsWhenNoPosition() public {
        vm.warp(EXPIRY + WRITE_OFF_GRACE + 1);
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.NoOpenPosition.selector, address(market)));
        gate.writeOff(address(market));
    }

    function test_writeOff_revertsUntilGraceHasPassed() public {
        _holdUp();
        uint256 allowedAfter = uint256(EXPIRY) + WRITE_OFF_GRACE;
        vm.warp(EXPIRY);
        vm.expectRevert(
            abi.encodeWithSelector(
                IRiskGate.WriteOffTooEarly.selector, address(market), EXPIRY, allowedAfter
            )
        );
        gate.writeOff(address(market));
        // Exactly expiry + grace is still too early: the rule is now > expiry + grace.
        vm.warp(allowedAfter);
        vm.expectRevert(
            abi.encodeWithSelector(
                IRiskGate.WriteOffTooEarly.selector, address(market), allowedAfter, allowedAfter
            )
        );
        gate.writeOff(address(market));
        vm.warp(allowedAfter + 1);
        vm.prank(stranger);
        gate.writeOff(address(market));
        assertTrue(gate.positionOf(address(market)).writtenOff);
    }

    function test_writeOff_revertsWhenTheFinalMarketCanPay() public {
        _holdUp();
        vm.warp(EXPIRY);
        market.resolve(false);
        vm.warp(EXPIRY + WRITE_OFF_GRACE + 1);
        // The market's redeem works (a loss pays 0 and still closes), so it is tried, undone,
        // and the caller is told to redeem instead.
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.MarketRedeemable.selector, address(market))
        );
        gate.writeOff(address(market));
        assertFalse(gate.positionOf(address(market)).writtenOff, "nothing changed");
        assertEq(market.upBalanceOf(address(gate)), 1_000, "the probe's redeem was undone");
    }

    function test_writeOff_revertsWhenAlreadyWrittenOff() public {
        _holdUp();
        vm.warp(EXPIRY + WRITE_OFF_GRACE + 1);
        gate.writeOff(address(market));
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.AlreadyWrittenOff.selector, address(market))
        );
        gate.writeOff(address(market));
    }

    // --- writeOff: what it does

    function test_writeOff_releasesSlotAndNotionalAndKeepsTheClaim() public {
        _holdUp();
        vm.warp(EXPIRY + WRITE_OFF_GRACE + 1);
        // Equity 99_580 + 420 = 100_000 = H: no change of H, so no HighWaterMark event first.
        vm.expectEmit(address(gate));
        emit IRiskGate.WrittenOff(address(market), 1_000, 0, 420, EXPIRY);
        vm.prank(stranger);
        gate.writeOff(address(market));
        assertEq(uint256(gate.openPositions()), 0, "slot released");
        assertEq(gate.openNotional(), 0, "notional released");
        IRiskGate.Position memory p = gate.positionOf(address(market));
        assertEq(p.upUnits, 1_000, "claim kept");
        assertEq(p.downUnits, 0);
        assertEq(p.notional, 420, "what it cost, for the record");
        assertTrue(p.writtenOff);
        // The loss counts against the drawdown: H stays 100_000, the equity is now 99_580.
        assertEq(gate.highWaterMark(), GATE_FUNDS);
        assertEq(token.balanceOf(address(gate)), GATE_FUNDS - 420);
        assertEq(market.upBalanceOf(address(gate)), 1_000, "the market still owes the claim");
    }

    function test_writeOff_worksWhilePaused() public {
        _holdUp();
        gate.pause();
        vm.warp(EXPIRY + WRITE_OFF_GRACE + 1);
        vm.prank(stranger);
        gate.writeOff(address(market));
        assertEq(uint256(gate.openPositions()), 0);
    }

    function test_writeOff_raisesHighWaterMarkBeforeReleasing() public {
        _holdUp();
        token.mint(address(gate), 1_000); // a donation: equity 100_580 + 420 = 101_000
        vm.warp(EXPIRY + WRITE_OFF_GRACE + 1);
        // H is taken with the notional still counted (101_000), not after (100_580).
        vm.expectEmit(address(gate));
        emit IRiskGate.HighWaterMark(101_000);
        vm.expectEmit(address(gate));
        emit IRiskGate.WrittenOff(address(market), 1_000, 0, 420, EXPIRY);
        gate.writeOff(address(market));
        assertEq(gate.highWaterMark(), 101_000);
        // Drawdown now: 101_000 - 100_580 = 420, the written-off notional.
    }

    function test_writeOff_freesTheSlotForTheNextDecision() public {
        BinaryMarket[3] memory stuck;
        for (uint256 i; i < 3; ++i) {
            stuck[i] = newMarket(EXPIRY, otherResolver); // a trusted resolver that never acts
            makerQuote(stuck[i], false, 420_000, 1_000);
            assertEq(submit(stuck[i], "BUY_UP"), 0);
        }
        assertEq(submit(market, "BUY_UP"), 8, "every slot taken");
        uint64 later = EXPIRY + WRITE_OFF_GRACE + 1;
        vm.warp(later);
        for (uint256 i; i < 3; ++i) {
            vm.prank(stranger);
            gate.writeOff(address(stuck[i]));
        }
        assertEq(uint256(gate.openPositions()), 0);
        BinaryMarket fresh = newMarket(later + 1 days, address(this));
        makerQuote(fresh, false, 420_000, 1_000);
        assertEq(submit(fresh, "BUY_UP"), 0, "the next decision passes");
    }

    // --- redeem after a write-off

    function test_redeem_afterWriteOffCollectsWithoutTouchingCounters() public {
        _holdUp();
        vm.warp(EXPIRY + WRITE_OFF_GRACE + 1);
        gate.writeOff(address(market));
        // Another position is open, so the counters are not zero.
        BinaryMarket other = newMarket(uint64(block.timestamp) + 1 days, address(this));
        makerQuote(other, false, 420_000, 1_000);
        assertEq(submit(other, "BUY_UP"), 0);
        assertEq(uint256(gate.openPositions()), 1);
        assertEq(gate.openNotional(), 420);
        // The late resolver acts after all: UP wins, the claim of 1_000 is paid.
        market.resolve(true);
        vm.expectEmit(address(gate));
        emit IRiskGate.Settled(address(market), true, 1_000, 0, 420, 1_000);
        // Balance 100_000 - 420 - 420 + 1_000 = 100_160, open 420: equity 100_580 > 100_000.
        vm.expectEmit(address(gate));
        emit IRiskGate.HighWaterMark(100_580);
        vm.prank(stranger);
        assertEq(gate.redeem(address(market)), 1_000);
        assertEq(uint256(gate.openPositions()), 1, "count untouched");
        assertEq(gate.openNotional(), 420, "notional untouched");
        IRiskGate.Position memory p = gate.positionOf(address(market));
        assertEq(p.upUnits + p.downUnits + p.notional, 0, "closed");
        assertFalse(p.writtenOff);
        assertEq(token.balanceOf(address(gate)), 100_160);
        assertEq(gate.highWaterMark(), 100_580);
    }

    function test_redeem_afterWriteOffOfALoserPaysNothing() public {
        _holdUp();
        vm.warp(EXPIRY + WRITE_OFF_GRACE + 1);
        gate.writeOff(address(market));
        market.resolve(false);
        assertEq(gate.redeem(address(market)), 0);
        assertEq(uint256(gate.openPositions()), 0);
        assertEq(gate.openNotional(), 0);
        assertEq(gate.highWaterMark(), GATE_FUNDS, "99_580 is below H: unchanged");
    }

    // --- withdrawCollateral and H

    function test_withdrawCollateral_lowersHighWaterMarkByAmount() public {
        // H is 0 until first raised; the withdrawal raises it to the equity (100_000), then
        // lowers it by the amount.
        vm.expectEmit(address(gate));
        emit IRiskGate.HighWaterMark(100_000);
        vm.expectEmit(address(gate));
        emit IRiskGate.HighWaterMark(99_000);
        vm.expectEmit(address(gate));
        emit IRiskGate.CollateralWithdrawn(address(this), 1_000);
        gate.withdrawCollateral(address(this), 1_000);
        assertEq(gate.highWaterMark(), 99_000);
        assertEq(token.balanceOf(address(this)), 1_000);
    }

    function test_withdrawCollateral_keepsTheDrawdownUnchanged() public {
        _holdUp();
        vm.warp(EXPIRY);
        market.resolve(false);
        gate.redeem(address(market)); // lost 420: H 100_000, balance 99_580, drawdown 420
        gate.withdrawCollateral(address(this), 50_000);
        assertEq(gate.highWaterMark(), 50_000);
        assertEq(token.balanceOf(address(gate)), 49_580, "still 420 below H");
    }

    function test_withdrawCollateral_lowersHighWaterMarkToZeroAtMost() public {
        gate.withdrawCollateral(address(this), GATE_FUNDS); // H 100_000 - 100_000 = 0
        assertEq(gate.highWaterMark(), 0);
        token.mint(address(gate), 10);
        gate.withdrawCollateral(address(this), 10); // raised to 10, lowered to 0
        assertEq(gate.highWaterMark(), 0);
    }

    function test_withdrawCollateral_revertsForZeroRecipient() public {
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.ZeroAddress.selector, "to"));
        gate.withdrawCollateral(address(0), 1);
    }

    // --- H rises before evaluation, and stays risen on a refusal

    function test_submitVerdict_raisesHighWaterMarkBeforeEvaluating() public {
        _holdUp();
        vm.warp(EXPIRY);
        market.resolve(false);
        gate.redeem(address(market)); // H 100_000, balance 99_580
        // A donation of 10_000 (a plain transfer): equity 109_580. v2 raised H to equity, which
        // refilled the 420 already lost; v2.1 raises H by exactly the donation, 110_000, so
        // H - equity stays 420.
        token.mint(address(gate), 10_000);
        BinaryMarket empty = newMarket(EXPIRY + 1 days, address(this));
        IRiskGate.Snapshot memory s = expectedSnapshot(empty);
        assertEq(s.highWaterMark, 110_000, "the snapshot carries H raised by the donation");
        IRiskGate.Quote memory q = keeperQuote(empty, "BUY_UP");
        IRiskGate.Order memory nothing;
        vm.expectEmit(address(gate));
        emit IRiskGate.Donated(10_000, 110_000);
        vm.expectEmit(address(gate));
        emit IRiskGate.HighWaterMark(110_000);
        expectDecision(empty, "BUY_UP", 4, BUY_UP, uint32(1) << 4, abi.encode(s, q), nothing);
        assertEq(submitQuoted(empty, "BUY_UP", q), 4);
        assertEq(gate.highWaterMark(), 110_000, "kept although refused");
        assertEq(gate.highWaterMark() - token.balanceOf(address(gate)), 420, "loss not refilled");
    }

    function test_highWaterMark_viewsAgree() public {
        _holdUp();
        token.mint(address(gate), 500);
        // Stored H is 100_000; the snapshot view shows what submitVerdict would raise it to:
        // 100_080 + 420 open = 100_500.
        assertEq(gate.highWaterMark(), 100_000);
        assertEq(gate.snapshotOf(address(market)).highWaterMark, 100_500);
    }
}
