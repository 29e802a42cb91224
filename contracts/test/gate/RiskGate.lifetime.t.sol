// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateDefaultsBase} from "./GateDefaultsBase.sol";
import {console} from "../utils/Test.sol";
import {RiskGate} from "../../src/RiskGate.sol";
import {relayed} from "../utils/Modes.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {BinaryMarket} from "../../src/venue/BinaryMarket.sol";
import {MarketFactory} from "../../src/venue/MarketFactory.sol";
import {FeeCollateral, CallbackCollateral, ITransferHook} from "../utils/FeeCollateral.sol";

/// @notice The holes of the second adversarial review (issue 14), each written from its
/// description against the v2.1 gate with the deploy defaults (band [0.05, 0.95], 100 tUSD per
/// order, 3 positions, 250 tUSD notional, 500 tUSD drawdown, 25 % minimum fill) over
/// 10,000 tUSD. Each asserts the attack is refused or bounded and prints its figure.
contract RiskGateLifetimeTest is GateDefaultsBase {
    address internal owner_ = address(this);

    /// @dev A gate on the defaults that trusts the test contract and the attacker as resolvers
    /// (a trusted resolver turned hostile drives the losses) and the test contract as creator.
    function _gate() internal {
        gate = new RiskGate(
            _defaults(),
            sorted2(address(this), attacker),
            one(address(this)),
            address(token),
            address(venue),
            keeperAddr,
            relayed(),
            address(0)
        );
        token.mint(owner_, 1_000_000 * TUSD);
        token.approve(address(gate), type(uint256).max);
        gate.deposit(FUNDS);
        token.mint(attacker, 1_000_000 * TUSD);
        token.mint(honestMaker, 1_000_000 * TUSD);
    }

    function _equity() internal view returns (uint256) {
        return token.balanceOf(address(gate)) + gate.openNotional();
    }

    /// @dev H - equity with H as the gate would settle it now.
    function _used() internal view returns (uint256) {
        return gate.snapshotOf(address(market)).highWaterMark - _equity();
    }

    /// @dev One loss of a whole order at 0.95: a market the test contract creates, naming the
    /// hostile (trusted) resolver, with an ask of 100 tUSD at 0.95; the gate buys it (95 tUSD)
    /// and the resolver resolves against it. Returns the reason of the buy.
    function _loseOnce() internal returns (uint8 reason) {
        uint64 expiry = uint64(block.timestamp) + 300;
        BinaryMarket m = newMarket(expiry, attacker);
        quoteAs(attacker, m, false, 950_000, ORDER);
        reason = submitQuoted(m, "BUY_UP", IRiskGate.Quote(950_000, uint64(block.timestamp) + 60));
        vm.warp(expiry);
        vm.prank(attacker);
        m.resolve(false);
        if (reason == 0) gate.redeem(address(m));
    }

    // --- 1. top-ups no longer refill the drawdown budget

    /// @dev The v2 measurement: lose, take out what was lost and put it back (either order),
    /// repeat. v2 lost 1,485 tUSD over two round trips; the lifetime bound is 500 tUSD.
    function _roundTrips(uint256 trips, uint256 mode) internal returns (uint256 totalLoss) {
        _gate();
        uint256 put = FUNDS;
        uint256 taken;
        for (uint256 t; t < trips; ++t) {
            // Lose until the gate stops (rule 14).
            for (uint256 k; k < 8; ++k) {
                if (_loseOnce() != 0) break;
            }
            uint256 lost = FUNDS - token.balanceOf(address(gate));
            if (lost == 0) continue;
            uint256 before = _used();
            if (mode == 0) {
                // Withdraw what was lost, then deposit it back.
                gate.withdrawCollateral(owner_, lost);
                assertEq(_used(), before, "a withdrawal leaves H - equity unchanged");
                gate.deposit(lost);
                taken += lost;
                put += lost;
            } else if (mode == 1) {
                // Deposit first, then withdraw.
                gate.deposit(lost);
                assertEq(_used(), before, "a deposit leaves H - equity unchanged");
                gate.withdrawCollateral(owner_, lost);
                taken += lost;
                put += lost;
            } else {
                // Keep the gate funded by plain transfers (a donation).
                token.transfer(address(gate), lost);
                put += lost;
            }
            assertEq(_used(), before, "the money movement left H - equity unchanged");
        }
        // Loss over the gate's life: everything put in, less everything taken out and held.
        totalLoss = put - taken - token.balanceOf(address(gate)) - gate.openNotional();
    }

    function test_lifetime_withdrawThenRedepositNeverRefills() public {
        uint256 loss = _roundTrips(10, 0);
        assertLe(loss, DRAWDOWN, "total loss over 10 round trips <= maxDrawdown");
        // Five whole-order losses at 95 tUSD = 475 tUSD; a sixth would take 570 > 500 (rule 14).
        assertEq(loss, 475 * TUSD);
        _print("withdraw and redeposit, 10 round trips: total loss", loss, DRAWDOWN);
    }

    function test_lifetime_depositThenWithdrawNeverRefills() public {
        uint256 loss = _roundTrips(10, 1);
        assertEq(loss, 475 * TUSD);
        _print("deposit then withdraw, 10 round trips: total loss", loss, DRAWDOWN);
    }

    function test_lifetime_donationsNeverRefill() public {
        uint256 loss = _roundTrips(10, 2);
        assertEq(loss, 475 * TUSD);
        assertEq(_loseOnce(), 14, "the gate that used its drawdown stays stopped");
        _print("donations keeping the gate funded, 10 rounds: total loss", loss, DRAWDOWN);
    }

    function test_lifetime_depositEventAndAccount() public {
        _gate();
        // deposit(FUNDS) in _gate: H = 10,000 tUSD, the account 10,000 tUSD.
        assertEq(gate.highWaterMark(), FUNDS);
        assertEq(gate.accountedCollateral(), FUNDS);
        vm.expectEmit(address(gate));
        emit IRiskGate.HighWaterMark(FUNDS + 5 * TUSD);
        vm.expectEmit(address(gate));
        emit IRiskGate.Deposited(owner_, 5 * TUSD, FUNDS + 5 * TUSD);
        gate.deposit(5 * TUSD);
        vm.expectRevert(IRiskGate.DepositZero.selector);
        gate.deposit(0);
        vm.expectRevert(
            abi.encodeWithSelector(
                IRiskGate.WithdrawExceedsBalance.selector, FUNDS + 6 * TUSD, FUNDS + 5 * TUSD
            )
        );
        gate.withdrawCollateral(owner_, FUNDS + 6 * TUSD);
        // Anyone may deposit, paused or not.
        gate.pause();
        vm.startPrank(honestMaker);
        token.approve(address(gate), TUSD);
        gate.deposit(TUSD);
        vm.stopPrank();
        assertEq(gate.highWaterMark(), FUNDS + 6 * TUSD);
    }

    function test_lifetime_feeOnTransferDepositsRaiseHByWhatArrived() public {
        FeeCollateral fee = new FeeCollateral();
        MarketFactory feeVenue = new MarketFactory(address(fee));
        RiskGate g = new RiskGate(
            _defaults(),
            one(address(this)),
            one(address(this)),
            address(fee),
            address(feeVenue),
            keeperAddr,
            relayed(),
            address(0)
        );
        fee.mint(owner_, 1_000_000 * TUSD);
        fee.approve(address(g), type(uint256).max);
        g.deposit(FUNDS);
        fee.setFeeBps(100); // 1 %
        // 100 tUSD sent, 99 arrive: H rises by 99, H - equity stays 0.
        g.deposit(ORDER);
        assertEq(g.highWaterMark(), FUNDS + 99 * TUSD);
        assertEq(g.highWaterMark(), fee.balanceOf(address(g)), "H - equity unchanged (0)");
        // A withdrawal: the gate's balance drops by the whole amount (the fee is the
        // receiver's), H by as much: unchanged again.
        g.withdrawCollateral(owner_, 50 * TUSD);
        assertEq(g.highWaterMark(), fee.balanceOf(address(g)), "H - equity unchanged (0)");
        // A donation that arrives short is a donation of what arrived.
        fee.transfer(address(g), ORDER);
        uint256 settled = g.snapshotOf(_feeMarket(feeVenue)).highWaterMark;
        assertEq(settled, fee.balanceOf(address(g)), "H - equity unchanged (0)");
        _print(
            "fee-on-transfer deposit, withdrawal, donation: H - equity after",
            settled - fee.balanceOf(address(g)),
            0
        );
    }

    function _feeMarket(MarketFactory f) internal returns (address) {
        return f.createMarket(
            QUESTION, 10_000, 100, TUSD, uint64(block.timestamp) + 1 days, address(this)
        );
    }

    // --- 2. a hostile creator naming a trusted resolver takes no slot

    function test_hostileCreator_everyAttemptIsReason19() public {
        _gate();
        uint256 attempts;
        // 14 rounds of three markets, as in the review (112 days of lock under v2).
        for (uint256 round; round < 14; ++round) {
            uint64 expiry = uint64(block.timestamp) + 7 days; // exactly maxHorizon away
            for (uint256 i; i < 3; ++i) {
                vm.prank(attacker);
                BinaryMarket m = BinaryMarket(
                    venue.createMarket(QUESTION, 10_000, 100, TUSD, expiry, address(this)) // trusted resolver
                );
                quoteAs(attacker, m, false, 420_000, TUSD); // the minimum fill the model likes
                assertEq(submit(m, "BUY_UP"), 19, "market creator not trusted");
                attempts += 1;
            }
            assertEq(uint256(gate.openPositions()), 0, "0 slots taken");
            vm.warp(expiry + 1);
        }
        assertEq(token.balanceOf(address(gate)), FUNDS, "nothing spent");
        console.log("hostile creator: attempts", attempts);
        _print("hostile creator naming a trusted resolver: slots taken", gate.openPositions(), 0);
    }

    // --- 3. dust ahead of real liquidity inside the limit

    /// @dev 64 orders of the venue minimum one tick inside the real level: asks at 0.41 for
    /// BUY_UP, bids at 0.59 for BUY_DOWN; from the attacker alone or from 64 makers.
    function _placeDust(BinaryMarket m, bool distinctMakers, bool buyDown) internal {
        for (uint256 i; i < 64; ++i) {
            address who = distinctMakers ? address(uint160(0xd000 + i)) : attacker;
            quoteAs(who, m, buyDown, buyDown ? 590_000 : 410_000, TUSD);
        }
    }

    /// @dev The real liquidity: 100 tUSD at 0.42 for BUY_UP (an ask), or a bid at 0.58 for
    /// BUY_DOWN, which also pays 1 - 0.58 = 0.42.
    function _placeReal(BinaryMarket m, bool buyDown) internal {
        quoteAs(honestMaker, m, buyDown, buyDown ? 580_000 : 420_000, ORDER);
    }

    /// @dev The keeper reads the book, quotes and submits. Standing dust: it quotes from the
    /// level the minimum fill needs, 0.42 + 50 bps = 0.4221 (the dust alone, 64 tUSD, would
    /// reach the 25 tUSD minimum too). Front-run: it reads the clean book and quotes the same
    /// from it, and the dust lands before its transaction.
    function _dustCase(bool distinctMakers, bool buyDown, bool frontRun) internal {
        _gate();
        string memory answer = buyDown ? "BUY_DOWN" : "BUY_UP";
        BinaryMarket m = newMarket();
        if (!frontRun) _placeDust(m, distinctMakers, buyDown);
        _placeReal(m, buyDown);
        IRiskGate.Quote memory q = IRiskGate.Quote(422_100, uint64(block.timestamp) + 60);
        if (frontRun) {
            assertEq(q.maxPricePaid, keeperQuote(m, answer).maxPricePaid, "the keeper's quote");
            _placeDust(m, distinctMakers, buyDown);
        }
        uint256 before = token.balanceOf(address(gate));
        vm.prank(keeperAddr);
        uint256 g0 = gasleft();
        uint8 reason = gate.submitVerdict(address(m), answer, bytes32(0), readBlockNow(), q);
        uint256 used = g0 - gasleft();
        // 64 matches of 1 tUSD fill 64 tUSD >= the 25 tUSD minimum: the order is kept.
        assertEq(reason, 0, "the match cap cannot hold the market at reason 18");
        IRiskGate.Position memory p = gate.positionOf(address(m));
        uint256 filled = p.upUnits + p.downUnits;
        assertGe(filled * 10_000, ORDER * 2_500, "at least the minimum filled");
        assertEq(filled, 64 * TUSD, "64 matches of one minimum each");
        console.log(
            string.concat(
                "dust: ",
                distinctMakers ? "64 makers" : "one maker",
                buyDown ? ", BUY_DOWN" : ", BUY_UP",
                frontRun ? ", front-run" : ", standing"
            )
        );
        console.log("  filled (base units)", filled);
        console.log("  spent (base units)", before - token.balanceOf(address(gate)));
        console.log("  gas of submitVerdict", used);
    }

    function test_dust_oneMakerStandingUp() public {
        _dustCase(false, false, false);
    }

    function test_dust_64MakersStandingUp() public {
        _dustCase(true, false, false);
    }

    function test_dust_oneMakerFrontRunUp() public {
        _dustCase(false, false, true);
    }

    function test_dust_64MakersFrontRunUp() public {
        _dustCase(true, false, true);
    }

    function test_dust_oneMakerStandingDown() public {
        _dustCase(false, true, false);
    }

    function test_dust_64MakersStandingDown() public {
        _dustCase(true, true, false);
    }

    function test_dust_oneMakerFrontRunDown() public {
        _dustCase(false, true, true);
    }

    function test_dust_64MakersFrontRunDown() public {
        _dustCase(true, true, true);
    }

    function test_dust_aGridTooFineForTheMatchCapIsRefusedUpFront() public {
        _gate();
        // The review's market: lot 100, minimum 100. 64 * 100 = 6_400 < 25e6: refused before
        // any order is sent, whatever the book.
        BinaryMarket m =
            BinaryMarket(venue.createMarket(QUESTION, 10_000, 100, 100, EXPIRY, address(this)));
        quoteAs(honestMaker, m, false, 420_000, ORDER);
        vm.recordLogs();
        assertEq(submit(m, "BUY_UP"), 20, "minimum fill beyond the venue's match cap");
        assertEq(m.upBalanceOf(address(gate)), 0, "no order was sent");
        // The smallest minimum that passes: ceil(25e6 / 64) = 390_625, on the 100 lot grid
        // 390_700 (a resting order is a whole number of lots, so 390_625 works as well).
        BinaryMarket ok =
            BinaryMarket(venue.createMarket(QUESTION, 10_000, 100, 390_625, EXPIRY, address(this)));
        quoteAs(honestMaker, ok, false, 420_000, ORDER);
        assertEq(submit(ok, "BUY_UP"), 0);
    }

    // --- 5. reentrancy through a callback collateral

    function test_reentrancy_callbackCollateralCannotRedeemOrWriteOffMidBuy() public {
        CallbackCollateral hook = new CallbackCollateral();
        MarketFactory hv = new MarketFactory(address(hook));
        RiskGate g = new RiskGate(
            _defaults(),
            one(address(this)),
            one(address(this)),
            address(hook),
            address(hv),
            keeperAddr,
            relayed(),
            address(0)
        );
        hook.mint(address(g), FUNDS);
        BinaryMarket m =
            BinaryMarket(hv.createMarket(QUESTION, 10_000, 100, TUSD, EXPIRY, address(this)));
        hook.mint(honestMaker, 1_000 * TUSD);
        vm.startPrank(honestMaker);
        hook.approve(address(m), type(uint256).max);
        m.placeAsk(420_000, ORDER);
        vm.stopPrank();
        Reenterer r = new Reenterer(g, address(m));
        // Every transfer out of the gate (the market pulling the gate's payment) calls back.
        hook.setHook(address(g), address(r));
        vm.prank(keeperAddr);
        uint8 reason = g.submitVerdict(
            address(m), "BUY_UP", bytes32(0), readBlockNow(), IRiskGate.Quote(422_100, EXPIRY)
        );
        assertEq(reason, 0);
        assertEq(r.attempts(), 4, "redeem, writeOff, deposit and withdraw were each tried");
        assertEq(r.refused(), 4, "each refused by the lock");
        // H stays exact: the buy moved collateral into notional one for one.
        assertEq(g.highWaterMark(), hook.balanceOf(address(g)) + g.openNotional());
        _print(
            "reentrancy through a callback collateral: calls that got in",
            r.attempts() - r.refused(),
            0
        );
    }

    // --- 5. a fee-on-transfer winner that cannot be redeemed is written off

    function test_feeOnTransfer_unredeemableWinnerIsWrittenOff() public {
        FeeCollateral fee = new FeeCollateral();
        MarketFactory fv = new MarketFactory(address(fee));
        RiskGate g = new RiskGate(
            _defaults(),
            one(address(this)),
            one(address(this)),
            address(fee),
            address(fv),
            keeperAddr,
            relayed(),
            address(0)
        );
        fee.mint(owner_, 1_000_000 * TUSD);
        fee.approve(address(g), type(uint256).max);
        g.deposit(FUNDS);
        BinaryMarket[3] memory ms;
        for (uint256 i; i < 3; ++i) {
            ms[i] =
                BinaryMarket(fv.createMarket(QUESTION, 10_000, 100, TUSD, EXPIRY, address(this)));
            fee.mint(honestMaker, 1_000 * TUSD);
            vm.startPrank(honestMaker);
            fee.approve(address(ms[i]), type(uint256).max);
            ms[i].placeAsk(420_000, ORDER);
            vm.stopPrank();
        }
        // The fee starts after the makers escrowed: every pull into a market now arrives short.
        fee.setFeeBps(100);
        for (uint256 i; i < 3; ++i) {
            vm.prank(keeperAddr);
            g.submitVerdict(
                address(ms[i]),
                "BUY_UP",
                bytes32(0),
                readBlockNow(),
                IRiskGate.Quote(422_100, EXPIRY)
            );
        }
        // 3 positions of 100 units at 0.42: 126 tUSD of notional, every slot taken.
        assertEq(uint256(g.openPositions()), 3);
        assertEq(g.openNotional(), 126 * TUSD);
        vm.warp(EXPIRY);
        for (uint256 i; i < 3; ++i) {
            ms[i].resolve(true); // the gate's UP wins
        }
        // Each market holds 42 * 0.99 + 58 = 99.58 tUSD against 100 owed: redeem reverts.
        vm.expectRevert();
        g.redeem(address(ms[0]));
        // Within the grace a write-off is still too early; after it, a final market that cannot
        // pay is written off like a silent one, and the slots and the notional come free.
        vm.warp(uint256(EXPIRY) + GRACE + 1);
        for (uint256 i; i < 3; ++i) {
            g.writeOff(address(ms[i]));
        }
        assertEq(uint256(g.openPositions()), 0, "slots free");
        assertEq(g.openNotional(), 0, "notional free");
        assertTrue(g.positionOf(address(ms[0])).writtenOff, "the claim is kept");
        _print(
            "fee-on-transfer winners: slots and notional held after write-off",
            g.openPositions() + g.openNotional(),
            0
        );
    }

    function _print(string memory what, uint256 loss, uint256 bound) internal view {
        console.log(what);
        console.log("  figure (base units)", loss);
        console.log("  bound (base units)", bound);
    }
}

/// @notice The callback: tries every collateral-moving entry point of the gate from inside the
/// gate's own buy, and counts how many the reentrancy lock refused.
contract Reenterer is ITransferHook {
    RiskGate internal immutable gate;
    address internal immutable market;
    uint256 public attempts;
    uint256 public refused;

    constructor(RiskGate gate_, address market_) {
        gate = gate_;
        market = market_;
    }

    /// @dev Called on every transfer out of the gate; the first time, tries the four entry
    /// points, counting each call made and each one the lock refused.
    function onTransfer(address, address, uint256) external {
        if (attempts != 0) return;
        attempts += 1;
        try gate.redeem(market) {}
        catch (bytes memory e) {
            if (_isLock(e)) refused += 1;
        }
        attempts += 1;
        try gate.writeOff(market) {}
        catch (bytes memory e) {
            if (_isLock(e)) refused += 1;
        }
        attempts += 1;
        try gate.deposit(1) {}
        catch (bytes memory e) {
            if (_isLock(e)) refused += 1;
        }
        attempts += 1;
        try gate.withdrawCollateral(address(this), 1) {}
        catch (bytes memory e) {
            if (_isLock(e)) refused += 1;
        }
    }

    function _isLock(bytes memory e) internal pure returns (bool) {
        return e.length == 4 && bytes4(e) == bytes4(keccak256("ReentrancyGuardReentrantCall()"));
    }
}
