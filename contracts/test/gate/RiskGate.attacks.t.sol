// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateDefaultsBase} from "./GateDefaultsBase.sol";
import {console} from "../utils/Test.sol";
import {RiskGate} from "../../src/RiskGate.sol";
import {relayed} from "../utils/Modes.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {BinaryMarket} from "../../src/venue/BinaryMarket.sol";

/// @notice The attacks of issue 7, each written from its description and run against the v2 gate
/// with the deploy defaults (band [0.05, 0.95], 100 tUSD per order, 5 minutes of headroom,
/// 3 positions, 250 tUSD notional, 7 days of horizon, 500 tUSD of drawdown, 1 day of grace,
/// 25 % minimum fill) over 10,000 tUSD. Each asserts that the attack is refused or bounded and
/// prints what it cost the gate next to its bound (collateral base units, 1e6 = 1 tUSD).
contract RiskGateAttacksTest is GateDefaultsBase {
    /// @dev A fresh gate with the defaults over FUNDS, trusting the test contract as resolver
    /// and creator and, when `attackerTrusted`, the attacker too in both roles (a trusted party
    /// turned hostile).
    function _gate(bool attackerTrusted) internal {
        address[] memory trusted =
            attackerTrusted ? sorted2(address(this), attacker) : one(address(this));
        gate = new RiskGate(
            _defaults(),
            trusted,
            trusted,
            address(token),
            address(venue),
            keeperAddr,
            relayed(),
            address(0)
        );
        token.mint(address(gate), FUNDS);
        token.mint(attacker, 1_000_000 * TUSD);
        token.mint(honestMaker, 1_000_000 * TUSD);
    }

    /// @dev The attacker creates a market it resolves itself and lists an ask on it.
    function _attackerMarket(uint64 expiry, uint256 ask, uint256 quantity)
        internal
        returns (BinaryMarket m)
    {
        vm.prank(attacker);
        m = BinaryMarket(venue.createMarket(QUESTION, 10_000, 100, TUSD, expiry, attacker));
        if (quantity != 0) {
            vm.startPrank(attacker);
            token.approve(address(m), type(uint256).max);
            m.placeAsk(ask, quantity);
            vm.stopPrank();
        }
    }

    /// @dev The keeper's builtin rule-based model: UP is cheap at or below 0.45, DOWN when the
    /// best bid is at or above 0.55; otherwise it abstains.
    function _builtinAnswer(BinaryMarket m) internal view returns (string memory) {
        if (m.finalized()) return "ABSTAIN";
        uint256 ask = m.bestAsk();
        uint256 bid = m.bestBid();
        if (ask != 0 && ask <= 450_000) return "BUY_UP";
        if (bid >= 550_000 && bid < ONE) return "BUY_DOWN";
        return "ABSTAIN";
    }

    function _balance() internal view returns (uint256) {
        return token.balanceOf(address(gate));
    }

    function _print(string memory what, uint256 loss, uint256 bound) internal view {
        console.log(what);
        console.log("  loss (base units)", loss);
        console.log("  bound (base units)", bound);
    }

    // --- 1. drain through attacker-created markets

    struct DrainResult {
        uint256 loss;
        uint256 passes;
        uint256 attempts;
        uint256 firstRefusal; // attempt index (1-based) of the first refusal, 0 if none
        uint8[] reasons;
    }

    /// @dev Rounds of the drain: the attacker creates three markets expiring in 300 s (exactly
    /// the headroom) with itself as resolver, each with an ask of 100 tUSD at `askPrice`; the
    /// keeper relays `answer` (or the builtin model's) with `quotePrice` (or its honest quote);
    /// at expiry the attacker resolves DOWN (against the gate's UP), redeems the gate's position
    /// itself to free the slot, and redeems its own winning DOWN units.
    function _drain(
        uint256 rounds,
        uint256 askPrice,
        bool compromisedKeeper,
        uint256 compromisedQuote
    ) internal returns (DrainResult memory r) {
        uint256 initial = _balance();
        r.reasons = new uint8[](rounds * 3);
        for (uint256 round; round < rounds; ++round) {
            uint64 expiry = uint64(block.timestamp) + 300;
            BinaryMarket[3] memory ms;
            for (uint256 i; i < 3; ++i) {
                ms[i] = _attackerMarket(expiry, askPrice, ORDER);
                string memory answer = compromisedKeeper ? "BUY_UP" : _builtinAnswer(ms[i]);
                IRiskGate.Quote memory q = compromisedKeeper
                    ? IRiskGate.Quote(compromisedQuote, uint64(block.timestamp) + 60)
                    : keeperQuote(ms[i], answer);
                uint8 reason = submitQuoted(ms[i], answer, q);
                r.reasons[r.attempts] = reason;
                r.attempts += 1;
                if (reason == 0) r.passes += 1;
                else if (r.firstRefusal == 0) r.firstRefusal = r.attempts;
            }
            vm.warp(expiry);
            for (uint256 i; i < 3; ++i) {
                vm.startPrank(attacker);
                ms[i].resolve(false);
                IRiskGate.Position memory p = gate.positionOf(address(ms[i]));
                if (p.upUnits != 0) gate.redeem(address(ms[i]));
                ms[i].redeem();
                vm.stopPrank();
            }
        }
        r.loss = initial - _balance();
    }

    function test_attack_drainUntrustedResolverIsRefusedEveryTime() public {
        _gate(false);
        DrainResult memory r = _drain(10, 450_000, false, 0);
        for (uint256 i; i < r.attempts; ++i) {
            assertEq(uint256(r.reasons[i]), 12, "every attempt is reason 12");
        }
        assertEq(r.passes, 0);
        assertEq(r.loss, 0, "nothing lost");
        assertEq(uint256(gate.openPositions()), 0);
        _print("drain, attacker NOT a trusted resolver (30 attempts)", r.loss, 0);
    }

    function test_attack_drainByTrustedResolverStopsAtMaxDrawdown() public {
        _gate(true);
        // Each decision buys 100 tUSD of UP at the keeper's limit 0.45 (quote
        // ceil(450_000 * 1.005) = 452_250, on the 0.01 grid 450_000): cost 45 tUSD, all lost.
        // With H = 10,000 tUSD, the k-th decision's drawdown is H - (balance - cost) =
        // 45 * (k - 1) + 45 = 45k tUSD (earlier losses plus open notional plus this cost), so
        // it passes iff 45k <= 500: k <= 11. Total: 11 * 45 = 495 tUSD <= 500.
        DrainResult memory r = _drain(8, 450_000, false, 0);
        assertEq(r.passes, 11, "11 decisions pay");
        assertEq(r.firstRefusal, 12, "the 12th is the first refused");
        for (uint256 i = r.firstRefusal - 1; i < r.attempts; ++i) {
            assertEq(uint256(r.reasons[i]), 14, "every refusal after is reason 14");
        }
        assertEq(r.loss, 495 * TUSD, "11 * 45 tUSD");
        assertLe(r.loss, DRAWDOWN, "loss <= maxDrawdown");
        assertGe(_balance() + DRAWDOWN, gate.highWaterMark(), "balance >= H - maxDrawdown");
        _print("drain, attacker a trusted resolver turned hostile (24 attempts)", r.loss, DRAWDOWN);
    }

    function test_attack_compromisedKeeperQuoting095IsBoundedByDrawdown() public {
        _gate(true);
        // The keeper answers BUY_UP and quotes 0.95 on every decision; the attacker's asks are
        // at 0.95. Cost 95 tUSD a decision. Notional: at most 2 open (3 * 95 > 250). Drawdown:
        // the k-th paying decision needs 95k <= 500, k <= 5. Rounds: (2 pass, rule 9),
        // (2 pass, rule 9), (1 pass: 475; then 570 > 500, rule 14). Total 5 * 95 = 475 tUSD.
        DrainResult memory r = _drain(6, 950_000, true, 950_000);
        assertEq(r.passes, 5);
        assertEq(r.loss, 475 * TUSD, "5 * 95 tUSD");
        assertLe(r.loss, DRAWDOWN, "loss <= maxDrawdown");
        uint8[9] memory first = [0, 0, 9, 0, 0, 9, 0, 14, 14];
        for (uint256 i; i < first.length; ++i) {
            assertEq(uint256(r.reasons[i]), uint256(first[i]), "reason by attempt");
        }
        for (uint256 i = first.length; i < r.attempts; ++i) {
            assertEq(uint256(r.reasons[i]), 14, "then reason 14 only");
        }
        _print("compromised keeper quoting 0.95 through hostile trusted markets", r.loss, DRAWDOWN);
    }

    // --- 2. sandwich

    function test_attack_sandwichIsRefusedByTheQuote() public {
        _gate(false);
        BinaryMarket m = newMarket();
        quoteAs(honestMaker, m, false, 420_000, 2 * ORDER);
        // The model is shown 0.42; the keeper quotes ceil(420_000 * 1.005) = 422_100.
        IRiskGate.Quote memory q = keeperQuote(m, "BUY_UP");
        assertEq(q.maxPricePaid, 422_100);
        // Before the submission the attacker lifts the 0.42 ask and re-offers at 0.95.
        vm.startPrank(attacker);
        token.approve(address(m), type(uint256).max);
        m.buyUp(420_000, 2 * ORDER);
        m.placeAsk(950_000, 2 * ORDER);
        vm.stopPrank();
        uint256 before = _balance();
        assertEq(submitQuoted(m, "BUY_UP", q), 15, "book moved past the quoted limit");
        uint256 loss = before - _balance();
        assertEq(loss, 0);
        assertEq(uint256(gate.openPositions()), 0);
        // v1 would have paid 0.95 for a token shown at 0.42: 53 tUSD over on 100 tUSD of payout.
        _print("sandwich re-offered at 0.95", loss, 0);
    }

    function test_attack_sandwichInsideTheSlippagePaysAtMostTheQuote() public {
        _gate(false);
        // A 0.001 grid (lot 1_000), so that there is room inside the 50 bps of slippage.
        BinaryMarket m =
            BinaryMarket(venue.createMarket(QUESTION, 1_000, 1_000, TUSD, EXPIRY, address(this)));
        quoteAs(honestMaker, m, false, 420_000, 2 * ORDER);
        // Quote 422_100; limit on the 0.001 grid: 422_000.
        IRiskGate.Quote memory q = keeperQuote(m, "BUY_UP");
        assertEq(q.maxPricePaid, 422_100);
        // The attacker lifts the 0.420 ask and re-offers half an order at 0.422 (inside the
        // slippage) and the rest at 0.95.
        vm.startPrank(attacker);
        token.approve(address(m), type(uint256).max);
        m.buyUp(420_000, 2 * ORDER);
        m.placeAsk(422_000, ORDER / 2);
        m.placeAsk(950_000, 2 * ORDER);
        vm.stopPrank();
        uint256 before = _balance();
        IRiskGate.Snapshot memory s = expectedSnapshot(m);
        // Fills 50 tUSD of payout at 0.422: spent 21.1 tUSD; 50 % of the order >= 25 %: kept.
        IRiskGate.Order memory o =
            IRiskGate.Order(422_000, 422_000, ORDER, 42_200_000, ORDER / 2, 21_100_000);
        expectDecision(m, "BUY_UP", 0, BUY_UP, 0, abi.encode(s, q), o);
        assertEq(submitQuoted(m, "BUY_UP", q), 0);
        uint256 spent = before - _balance();
        assertEq(spent, 21_100_000);
        assertLe(o.pricePaid, q.maxPricePaid, "price paid <= quoted limit");
        assertLe(spent * ONE, o.filled * q.maxPricePaid, "every unit at or below the quote");
        // What the sandwich took over the price shown: (0.422 - 0.420) * 50 tUSD = 0.1 tUSD; the
        // keeper's slippage allows (0.4221 - 0.420) * 50 tUSD = 0.105 tUSD.
        uint256 extra = spent - o.filled * 420_000 / ONE;
        uint256 allowed = o.filled * (q.maxPricePaid - 420_000) / ONE;
        assertEq(extra, 100_000);
        assertLe(extra, allowed);
        _print("sandwich re-offered inside the slippage: paid over the price shown", extra, allowed);
    }

    // --- 3. locked slots

    function test_attack_marketsExpiringAtUint64MaxTakeNoSlot() public {
        _gate(true);
        // A trusted resolver's markets that expire in 2^64 - 1, each with a minimum ask at 0.05:
        // refused for the horizon (the keeper quotes 50_250, limit 0.05: nothing else fails).
        for (uint256 i; i < 3; ++i) {
            BinaryMarket m = _attackerMarket(type(uint64).max, 50_000, TUSD);
            assertEq(submit(m, "BUY_UP"), 13, "expiry too far out");
        }
        uint256 slotsTaken = gate.openPositions();
        assertEq(slotsTaken, 0, "no slot taken");
        assertEq(_balance(), FUNDS, "nothing spent");
        // An honest market still trades.
        BinaryMarket honest = newMarket();
        quoteAs(honestMaker, honest, false, 420_000, ORDER);
        assertEq(submit(honest, "BUY_UP"), 0);
        _print("markets expiring at 2^64 - 1: slots taken", slotsTaken, 0);
    }

    function test_attack_resolverThatNeverActsIsWrittenOff() public {
        _gate(true);
        // Three markets of a trusted resolver that never resolves, each with an ask of a whole
        // order at 0.05: the gate buys into all three (5 tUSD each) and every slot is taken.
        BinaryMarket[3] memory stuck;
        for (uint256 i; i < 3; ++i) {
            stuck[i] = _attackerMarket(EXPIRY, 50_000, ORDER);
            assertEq(submit(stuck[i], "BUY_UP"), 0);
        }
        BinaryMarket honest = newMarket();
        quoteAs(honestMaker, honest, false, 420_000, ORDER);
        assertEq(submit(honest, "BUY_UP"), 8, "every slot taken");
        // At expiry + grace it is still too early; one second later anyone may write off.
        vm.warp(uint256(EXPIRY) + GRACE);
        vm.expectRevert(
            abi.encodeWithSelector(
                IRiskGate.WriteOffTooEarly.selector,
                address(stuck[0]),
                uint256(EXPIRY) + GRACE,
                uint256(EXPIRY) + GRACE
            )
        );
        gate.writeOff(address(stuck[0]));
        vm.warp(uint256(EXPIRY) + GRACE + 1);
        for (uint256 i; i < 3; ++i) {
            vm.prank(honestMaker);
            gate.writeOff(address(stuck[i]));
        }
        assertEq(uint256(gate.openPositions()), 0, "slots free");
        BinaryMarket fresh = newMarket(uint64(block.timestamp) + 1 days, address(this));
        quoteAs(honestMaker, fresh, false, 420_000, ORDER);
        assertEq(submit(fresh, "BUY_UP"), 0, "the next decision passes");
        // Written off: 3 * 100 tUSD * 0.05 = 15 tUSD, counted against the drawdown.
        uint256 writtenOff = 15 * TUSD;
        assertEq(gate.highWaterMark() - (_balance() + gate.openNotional()), writtenOff);
        _print("resolver that never acts: written off", writtenOff, DRAWDOWN);
    }

    function test_attack_dustAskOneTickBetterTakesNoSlot() public {
        _gate(false);
        BinaryMarket m = newMarket();
        quoteAs(honestMaker, m, false, 420_000, 2 * ORDER);
        quoteAs(attacker, m, false, 410_000, TUSD); // the venue minimum, one tick better
        uint256 before = _balance();
        // Shown 0.41, quoted 412_050, limit 0.41: 1 tUSD fills of 100 tUSD, below 25 %. The only
        // liquidity inside the limit is below the minimum fill: the limit that remains.
        assertEq(submit(m, "BUY_UP"), 18, "fill below minimum");
        assertEq(uint256(gate.openPositions()), 0, "no slot");
        assertEq(before - _balance(), 0);
        assertEq(m.bestAsk(), 410_000, "the dust is still there");
        _print("dust ask one tick better: slots taken", gate.openPositions(), 0);
    }

    // --- 4. both sides of one market

    function test_attack_bothSidesOfOneMarketIsRefused() public {
        _gate(false);
        BinaryMarket m = newMarket();
        quoteAs(honestMaker, m, false, 950_000, 3 * ORDER);
        quoteAs(honestMaker, m, true, 50_000, 3 * ORDER);
        // BUY_UP at 0.95 (95 tUSD), then BUY_DOWN at 1 - 0.05 = 0.95: together 190 tUSD for a
        // pair that redeems for 100 tUSD whatever the outcome. The second is refused.
        IRiskGate.Quote memory q = IRiskGate.Quote(950_000, uint64(block.timestamp) + 60);
        uint256 before = _balance();
        assertEq(submitQuoted(m, "BUY_UP", q), 0);
        assertEq(submitQuoted(m, "BUY_DOWN", q), 17, "opposite side already held");
        assertEq(before - _balance(), 95 * TUSD, "only the UP leg was bought");
        IRiskGate.Position memory p = gate.positionOf(address(m));
        assertEq(p.downUnits, 0);
        // Adding to the UP side is allowed within the caps: 95 + 95 = 190 <= 250 ...
        assertEq(submitQuoted(m, "BUY_UP", q), 0, "same side again");
        assertEq(gate.positionOf(address(m)).upUnits, 2 * ORDER);
        assertEq(uint256(gate.openPositions()), 1, "one market, one slot");
        // ... and a third would make 285 > 250.
        assertEq(submitQuoted(m, "BUY_UP", q), 9, "notional cap");
        // The pair's sure loss (1.90 paid for 1.00) never happens: no DOWN unit was bought.
        _print("both sides of one market: DOWN units bought after UP", p.downUnits, 0);
    }

    // --- 6. a 100 KB answer costs calldata and hashing, not logging

    function test_attack_hugeAnswerCostsNoMoreThanItsHash() public {
        _gate(false);
        string memory small = string(repeatByte("A", 64));
        string memory huge = string(repeatByte("A", 100_000));
        IRiskGate.Quote memory q;
        vm.startPrank(keeperAddr);
        // Warm the gate and the factory the same way for both measured calls.
        gate.submitVerdict(address(market), small, bytes32(0), readBlockNow(), q);
        // Gas used inside the gate's frame (vm.lastCallGas): the caller's own copies of the
        // argument are not the gate's cost.
        assertEq(
            gate.submitVerdict(address(market), small, bytes32(0), readBlockNow(), q),
            11,
            "a refusal"
        );
        uint256 smallGas = vm.lastCallGas().gasTotalUsed;
        assertEq(
            gate.submitVerdict(address(market), huge, bytes32(0), readBlockNow(), q),
            11,
            "a refusal"
        );
        uint256 hugeGas = vm.lastCallGas().gasTotalUsed;
        vm.stopPrank();
        // The bound, for w = 100_000 / 32 = 3_125 words hashed once:
        //   copy to memory  3 * w                    =  9_375
        //   memory growth   3 * w + w^2 / 512        =  9_375 + 19_073 = 28_448
        //   keccak          6 * w                    = 18_750
        //   memory already in use (at most 64 words) adds 2 * 64 * w / 512 = 781
        //   total                                    = 57_354
        // In a transaction the calldata comes on top: 16 gas per non-zero byte = 1_600_000 (a
        // call between contracts carries it free). Logging the answer would have added 8 gas
        // per byte, 800_000, and v1 did: 929k gas for this refusal.
        uint256 w = 3_125;
        uint256 hashCopyBound = 3 * w + 3 * w + w * w / 512 + 6 * w + 2 * 64 * w / 512;
        assertEq(hashCopyBound, 57_354);
        uint256 calldataCost = 16 * 100_000;
        uint256 diff = hugeGas - smallGas;
        assertLt(diff, calldataCost + hashCopyBound, "below calldata + hashing");
        assertLt(diff, hashCopyBound, "below hashing and copying alone");
        console.log("refusing a 64-byte answer (gas inside the gate)", smallGas);
        console.log("refusing a 100 KB answer (gas inside the gate)", hugeGas);
        console.log("difference", diff);
        console.log("bound: hashing and copying 100 KB", hashCopyBound);
        console.log("logging 100 KB would have added", uint256(8 * 100_000));
    }
}
