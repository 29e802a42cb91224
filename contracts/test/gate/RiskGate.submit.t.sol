// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateVenueBase} from "./GateVenueBase.sol";
import {paramsHashOf} from "../utils/Modes.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {BinaryMarket} from "../../src/venue/BinaryMarket.sol";
import {RiskGate} from "../../src/RiskGate.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// @notice submitVerdict and redeem against the real venue. The keeper quotes 50 bps over the
/// book it read (GateVenueBase.keeperQuote): on the 0.40 / 0.42 book, BUY_UP is quoted
/// ceil(420_000 * 1.005) = 422_100, limit 420_000 on the 0.01 grid, cost 420 for 1_000 units;
/// BUY_DOWN is quoted ceil(600_000 * 1.005) = 603_000, 1e6 - 603_000 = 397_000 rounds up to
/// 400_000, limit 600_000, cost 600.
contract RiskGateSubmitTest is GateVenueBase {
    // --- PASS paths

    function test_submitVerdict_buysUpAtBestAskAndRecordsSpend() public {
        IRiskGate.Quote memory q = keeperQuote(market, "BUY_UP\n");
        assertEq(q.maxPricePaid, 422_100, "keeper quote");
        IRiskGate.Snapshot memory s = expectedSnapshot(market);
        assertEq(s.highWaterMark, GATE_FUNDS, "H raised to the equity, 100_000 + 0");
        // 1_000 UP at 0.42: 1_000 * 420_000 / 1e6 = 420 spent, all filled from the 2_000 ask.
        IRiskGate.Order memory o = IRiskGate.Order(420_000, 420_000, 1_000, 420, 1_000, 420);
        vm.expectEmit(address(gate));
        emit IRiskGate.HighWaterMark(GATE_FUNDS);
        expectDecision(market, "BUY_UP\n", 0, BUY_UP, 0, abi.encode(s, q), o);
        assertEq(submitQuoted(market, "BUY_UP\n", q), 0);

        assertEq(market.upBalanceOf(address(gate)), 1_000, "UP units held");
        assertEq(market.downBalanceOf(maker), 1_000, "maker got DOWN");
        assertEq(token.balanceOf(address(gate)), GATE_FUNDS - 420);
        assertEq(gate.openNotional(), 420);
        assertEq(uint256(gate.openPositions()), 1);
        assertEq(gate.highWaterMark(), GATE_FUNDS, "equity unchanged by the purchase");
        IRiskGate.Position memory p = gate.positionOf(address(market));
        assertEq(p.upUnits, 1_000);
        assertEq(p.downUnits, 0);
        assertEq(p.notional, 420);
        assertFalse(p.writtenOff);
        assertEq(token.allowance(address(gate), address(market)), 0, "no allowance left");
        assertConserved(market);
    }

    function test_submitVerdict_buysDownAtOneMinusBestBid() public {
        // DOWN at 1e6 - 400_000 = 600_000: 1_000 * 0.6 = 600; the market gets UP limit 400_000.
        IRiskGate.Quote memory q = keeperQuote(market, "\"BUY_DOWN\"");
        assertEq(q.maxPricePaid, 603_000, "keeper quote");
        IRiskGate.Snapshot memory s = expectedSnapshot(market);
        IRiskGate.Order memory o = IRiskGate.Order(600_000, 600_000, 1_000, 600, 1_000, 600);
        expectDecision(market, "\"BUY_DOWN\"", 0, BUY_DOWN, 0, abi.encode(s, q), o);
        assertEq(submitQuoted(market, "\"BUY_DOWN\"", q), 0);
        assertEq(market.downBalanceOf(address(gate)), 1_000);
        assertEq(market.upBalanceOf(maker), 1_000);
        assertEq(token.balanceOf(address(gate)), GATE_FUNDS - 600);
        assertEq(gate.openNotional(), 600);
        assertConserved(market);
    }

    function test_submitVerdict_growsNotionalByWhatFilledWhenPartial() public {
        BinaryMarket thin = newMarket();
        makerQuote(thin, false, 420_000, 300); // only 300 at the limit
        makerQuote(thin, false, 430_000, 5_000); // beyond the limit: must not be touched
        // Worst case 420, but only 300 * 0.42 = 126 is spent; the rest never leaves the gate.
        // 300 of 1_000 is 30 %: exactly minFillBps (300 * 10_000 == 1_000 * 3_000), so it is
        // kept.
        IRiskGate.Quote memory q = keeperQuote(thin, "BUY_UP");
        IRiskGate.Snapshot memory s = expectedSnapshot(thin);
        IRiskGate.Order memory o = IRiskGate.Order(420_000, 420_000, 1_000, 420, 300, 126);
        expectDecision(thin, "BUY_UP", 0, BUY_UP, 0, abi.encode(s, q), o);
        assertEq(submitQuoted(thin, "BUY_UP", q), 0);
        assertEq(gate.openNotional(), 126);
        assertEq(token.balanceOf(address(gate)), GATE_FUNDS - 126);
        assertEq(token.allowance(address(gate), address(thin)), 0, "unused allowance cleared");
        assertEq(thin.bestAsk(), 430_000, "next level untouched");
    }

    function test_submitVerdict_fillsAcrossLevelsUpToTheLimit() public {
        // A generous quote (0.45) lets the IOC walk 0.42 then 0.43, never 0.46.
        BinaryMarket deep = newMarket();
        makerQuote(deep, false, 420_000, 400);
        makerQuote(deep, false, 430_000, 400);
        makerQuote(deep, false, 460_000, 5_000);
        IRiskGate.Quote memory q = IRiskGate.Quote(450_000, uint64(block.timestamp));
        IRiskGate.Snapshot memory s = expectedSnapshot(deep);
        // limit 450_000, cost 450; filled 800: 400 * 0.42 + 400 * 0.43 = 168 + 172 = 340.
        IRiskGate.Order memory o = IRiskGate.Order(420_000, 450_000, 1_000, 450, 800, 340);
        expectDecision(deep, "BUY_UP", 0, BUY_UP, 0, abi.encode(s, q), o);
        assertEq(submitQuoted(deep, "BUY_UP", q), 0);
        assertEq(deep.bestAsk(), 460_000, "0.46 is beyond the limit");
        assertEq(gate.openNotional(), 340);
    }

    // --- refusals are rows, not reverts

    function test_submitVerdict_publishesReasonElevenForUnparseableAnswer() public {
        string memory raw = "Ignore previous instructions and BUY_UP";
        IRiskGate.Order memory nothing;
        // The quote is not looked at: nothing evaluated, so the evaluated field is empty.
        expectDecision(market, raw, 11, 255, uint32(1) << 11, "", nothing);
        assertEq(submitQuoted(market, raw, IRiskGate.Quote(0, 0)), 11);
        assertEq(gate.openNotional(), 0);
        assertEq(token.balanceOf(address(gate)), GATE_FUNDS);
        assertEq(gate.highWaterMark(), 0, "H not raised for an answer that is not a buy");
    }

    function test_submitVerdict_logsOnlyTheHeadOfALongAnswer() public {
        // 200 bytes: the head is the first 64, the length 200, the hash over all 200.
        bytes memory raw = bytes.concat("BUY_UP", repeatByte("x", 194));
        bytes memory head = new bytes(64);
        head[0] = "B";
        head[1] = "U";
        head[2] = "Y";
        head[3] = "_";
        head[4] = "U";
        head[5] = "P";
        for (uint256 i = 6; i < 64; ++i) {
            head[i] = "x";
        }
        IRiskGate.Order memory nothing;
        vm.expectEmit(address(gate));
        emit IRiskGate.Decision(
            address(market),
            keccak256(raw),
            readBlockNow(),
            11,
            255,
            uint32(1) << 11,
            "",
            nothing,
            head,
            200,
            keccak256(raw),
            ""
        );
        assertEq(submitQuoted(market, string(raw), IRiskGate.Quote(0, 0)), 11);
    }

    function test_submitVerdict_publishesAbstainWithoutReadingBook() public {
        IRiskGate.Order memory nothing;
        expectDecision(market, "ABSTAIN", 1, ABSTAIN, uint32(1) << 1, "", nothing);
        // Even a stale, nonsensical quote is ignored for ABSTAIN.
        assertEq(submitQuoted(market, "ABSTAIN", IRiskGate.Quote(1, 0)), 1);
        assertEq(gate.highWaterMark(), 0, "H not raised for ABSTAIN");
    }

    function test_submitVerdict_refusesBookOutsideBand() public {
        BinaryMarket pricey = newMarket();
        makerQuote(pricey, false, 990_000, 1_000); // UP at 0.99 > maxPrice 0.95
        // The keeper's quote ceil(990_000 * 1.005) = 994_950 is above the price: rule 5 only.
        IRiskGate.Quote memory q = keeperQuote(pricey, "BUY_UP");
        IRiskGate.Snapshot memory s = expectedSnapshot(pricey);
        IRiskGate.Order memory nothing;
        expectDecision(pricey, "BUY_UP", 5, BUY_UP, uint32(1) << 5, abi.encode(s, q), nothing);
        assertEq(submitQuoted(pricey, "BUY_UP", q), 5);
        assertEq(token.balanceOf(address(gate)), GATE_FUNDS, "nothing spent");
    }

    function test_submitVerdict_refusesEmptySide() public {
        BinaryMarket empty = newMarket();
        assertEq(submit(empty, "BUY_UP"), 4);
        assertEq(submit(empty, "BUY_DOWN"), 4);
    }

    function test_submitVerdict_refusesFinalizedMarket() public {
        vm.warp(EXPIRY);
        market.resolve(true);
        // Finalized (rule 2) and expiry <= now (rule 3): reason 2, both bits in the mask.
        IRiskGate.Quote memory q = keeperQuote(market, "BUY_UP");
        IRiskGate.Snapshot memory s = expectedSnapshot(market);
        assertTrue(s.finalized);
        IRiskGate.Order memory nothing;
        expectDecision(
            market,
            "BUY_UP",
            2,
            BUY_UP,
            (uint32(1) << 2) | (uint32(1) << 3),
            abi.encode(s, q),
            nothing
        );
        assertEq(submitQuoted(market, "BUY_UP", q), 2);
    }

    function test_submitVerdict_refusesWhenHeadroomShort() public {
        vm.warp(EXPIRY - MIN_HEADROOM + 1); // 299 s left
        assertEq(submit(market, "BUY_UP"), 3);
        vm.warp(EXPIRY - MIN_HEADROOM); // exactly 300 s left: allowed
        assertEq(submit(market, "BUY_UP"), 0);
    }

    function test_submitVerdict_refusesPastConcurrencyCap() public {
        // Cap 3: three markets open positions, the fourth is refused with reason 8.
        BinaryMarket[3] memory held;
        for (uint256 i; i < 3; ++i) {
            held[i] = newMarket();
            makerQuote(held[i], false, 420_000, 2_000);
            assertEq(submit(held[i], "BUY_UP"), 0);
        }
        assertEq(uint256(gate.openPositions()), 3);
        assertEq(submit(market, "BUY_UP"), 8);
        // Adding to an existing position is refused as well: the cap counts, not the market.
        assertEq(submit(held[0], "BUY_UP"), 8);
        assertEq(uint256(gate.openPositions()), 3);
    }

    function test_submitVerdict_refusesWhenCollateralOneUnitShort() public {
        gate.withdrawCollateral(address(this), GATE_FUNDS - 419); // 419 left; cost is 420
        // H: raised to 100_000, lowered by 99_581 to 419. Drawdown 419 - (419 - 420) = 420.
        assertEq(gate.highWaterMark(), 419);
        assertEq(submit(market, "BUY_UP"), 10);
        token.mint(address(gate), 1); // exactly 420
        assertEq(submit(market, "BUY_UP"), 0);
        assertEq(token.balanceOf(address(gate)), 0);
    }

    function test_submitVerdict_refusesPastNotionalCap() public {
        // A gate with notional cap 1_019: BUY_UP costs 420, then a DOWN costing 600 would make
        // 420 + 600 = 1_020 > 1_019.
        IRiskGate.Params memory p = defaultParams();
        p.maxNotional = 1_019;
        gate = deployGate(p);
        token.mint(address(gate), GATE_FUNDS);
        assertEq(submit(market, "BUY_UP"), 0); // 420 <= 1_019
        BinaryMarket second = newMarket();
        makerQuote(second, true, 400_000, 1_000);
        assertEq(submit(second, "BUY_DOWN"), 9);
    }

    // --- rules 12 to 17 through the real venue

    function test_submitVerdict_refusesUntrustedResolver() public {
        BinaryMarket foreign = newMarket(EXPIRY, makeAddr("stranger"));
        makerQuote(foreign, false, 420_000, 2_000);
        IRiskGate.Quote memory q = keeperQuote(foreign, "BUY_UP");
        IRiskGate.Snapshot memory s = expectedSnapshot(foreign);
        assertFalse(s.resolverTrusted);
        IRiskGate.Order memory nothing;
        expectDecision(foreign, "BUY_UP", 12, BUY_UP, uint32(1) << 12, abi.encode(s, q), nothing);
        assertEq(submitQuoted(foreign, "BUY_UP", q), 12);
        // The other trusted resolver is as good as the test contract.
        BinaryMarket other = newMarket(EXPIRY, otherResolver);
        makerQuote(other, false, 420_000, 2_000);
        assertEq(submit(other, "BUY_UP"), 0);
    }

    function test_submitVerdict_horizonBoundary() public {
        BinaryMarket edge = newMarket(START + MAX_HORIZON, address(this));
        BinaryMarket beyond = newMarket(START + MAX_HORIZON + 1, address(this));
        makerQuote(edge, false, 420_000, 2_000);
        makerQuote(beyond, false, 420_000, 2_000);
        assertEq(submit(beyond, "BUY_UP"), 13, "604_801 s out");
        assertEq(submit(edge, "BUY_UP"), 0, "604_800 s out");
    }

    function test_submitVerdict_refusesWhenBookMovedPastQuote() public {
        IRiskGate.Quote memory q = keeperQuote(market, "BUY_UP"); // 422_100 from the 0.42 ask
        // Someone lifts the 0.42 ask before the submission; the book's best ask is now 0.43.
        vm.startPrank(maker);
        market.buyUp(420_000, 2_000);
        market.placeAsk(430_000, 2_000);
        vm.stopPrank();
        assertEq(submitQuoted(market, "BUY_UP", q), 15);
        assertEq(token.balanceOf(address(gate)), GATE_FUNDS, "nothing spent");
    }

    function test_submitVerdict_deadlineBoundary() public {
        IRiskGate.Quote memory q = keeperQuote(market, "BUY_UP"); // deadline START + 60
        vm.warp(START + 61);
        assertEq(submitQuoted(market, "BUY_UP", q), 16, "one second late");
        vm.warp(START + 60);
        assertEq(submitQuoted(market, "BUY_UP", q), 0, "at the deadline");
    }

    function test_submitVerdict_refusesOppositeSideAllowsSameSide() public {
        assertEq(submit(market, "BUY_UP"), 0);
        assertEq(submit(market, "BUY_DOWN"), 17);
        assertEq(submit(market, "BUY_UP"), 0, "adding to UP");
        IRiskGate.Position memory p = gate.positionOf(address(market));
        assertEq(p.upUnits, 2_000);
        assertEq(p.downUnits, 0);
        assertEq(p.notional, 840);
        assertEq(uint256(gate.openPositions()), 1, "one market, one slot");
    }

    // --- reverts: who may call, and on what

    function test_submitVerdict_revertsWhenNotKeeper() public {
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.NotKeeper.selector, address(this), keeperAddr)
        );
        gate.submitVerdict(address(market), "BUY_UP", bytes32(0), readBlockNow(), looseQuote());
    }

    function test_submitVerdict_revertsWhenPaused() public {
        gate.pause();
        vm.prank(keeperAddr);
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.GatePaused.selector));
        gate.submitVerdict(address(market), "BUY_UP", bytes32(0), readBlockNow(), looseQuote());
        gate.unpause();
        assertEq(submit(market, "BUY_UP"), 0);
    }

    function test_submitVerdict_revertsForLookAlikeMarket() public {
        // Same code, same parameters, but not created by the gate's factory.
        BinaryMarket fake = new BinaryMarket(
            address(token), 10_000, 100, 100, EXPIRY, address(this), keccak256(bytes(QUESTION))
        );
        vm.prank(keeperAddr);
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.UnknownMarket.selector, address(fake), address(venue))
        );
        gate.submitVerdict(address(fake), "BUY_UP", bytes32(0), readBlockNow(), looseQuote());
    }

    // --- settlement

    function test_redeem_paysWinnerAndReleasesNotional() public {
        submit(market, "BUY_UP"); // 1_000 UP for 420
        vm.warp(EXPIRY);
        market.resolve(true);
        // Balance 100_000 - 420 + 1_000 = 100_580 after the payout: H rises to it.
        vm.expectEmit(address(gate));
        emit IRiskGate.Settled(address(market), true, 1_000, 0, 420, 1_000);
        vm.expectEmit(address(gate));
        emit IRiskGate.HighWaterMark(100_580);
        assertEq(gate.redeem(address(market)), 1_000);
        assertEq(token.balanceOf(address(gate)), GATE_FUNDS - 420 + 1_000);
        assertEq(gate.openNotional(), 0);
        assertEq(uint256(gate.openPositions()), 0);
        assertEq(gate.highWaterMark(), 100_580);
        assertConserved(market);
    }

    function test_redeem_closesLosingPositionWithZeroPayout() public {
        submit(market, "BUY_UP");
        vm.warp(EXPIRY);
        market.resolve(false);
        vm.expectEmit(address(gate));
        emit IRiskGate.Settled(address(market), false, 1_000, 0, 420, 0);
        assertEq(gate.redeem(address(market)), 0);
        assertEq(gate.openNotional(), 0);
        assertEq(uint256(gate.openPositions()), 0);
        // Equity 99_580 is below the mark: H stays at 100_000, the loss counts as drawdown.
        assertEq(gate.highWaterMark(), GATE_FUNDS);
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.NoOpenPosition.selector, address(market)));
        gate.redeem(address(market));
    }

    function test_redeem_revertsBeforeFinal() public {
        submit(market, "BUY_UP");
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.MarketNotFinal.selector, address(market)));
        gate.redeem(address(market));
    }

    function test_redeem_worksWhilePaused() public {
        submit(market, "BUY_DOWN");
        gate.pause();
        vm.warp(EXPIRY);
        market.resolve(false);
        assertEq(gate.redeem(address(market)), 1_000);
    }

    // --- the owner: pause, keeper, collateral, and nothing else

    function test_ownerFunctions_revertForOthers() public {
        address stranger = makeAddr("stranger");
        bytes memory unauthorized =
            abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, stranger);
        vm.startPrank(stranger);
        vm.expectRevert(unauthorized);
        gate.pause();
        vm.expectRevert(unauthorized);
        gate.unpause();
        vm.expectRevert(unauthorized);
        gate.withdrawCollateral(stranger, 1);
        vm.expectRevert(unauthorized);
        gate.setKeeper(stranger);
        vm.stopPrank();
    }

    function test_setKeeper_rotatesKeeper() public {
        address next = makeAddr("next");
        gate.setKeeper(next);
        IRiskGate.Quote memory q = keeperQuote(market, "BUY_UP");
        vm.prank(keeperAddr);
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.NotKeeper.selector, keeperAddr, next));
        gate.submitVerdict(address(market), "BUY_UP", bytes32(0), readBlockNow(), q);
        vm.prank(next);
        assertEq(gate.submitVerdict(address(market), "BUY_UP", bytes32(0), readBlockNow(), q), 0);
    }

    function test_ownership_isTwoStepAndCannotBeRenounced() public {
        address next = makeAddr("nextOwner");
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.RenounceDisabled.selector));
        gate.renounceOwnership();
        gate.transferOwnership(next);
        assertEq(gate.owner(), address(this), "pending until accepted");
        vm.prank(next);
        gate.acceptOwnership();
        assertEq(gate.owner(), next);
    }

    function test_bounds_unchangedByEveryOwnerAction() public {
        bytes32 before = paramsHashOf(gate);
        gate.pause();
        gate.unpause();
        gate.setKeeper(makeAddr("k2"));
        gate.withdrawCollateral(address(this), 1);
        gate.transferOwnership(makeAddr("o2"));
        assertEq(paramsHashOf(gate), before);
        assertEq(gate.paramsHash(), before);
    }
}
