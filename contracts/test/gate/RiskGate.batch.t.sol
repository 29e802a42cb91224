// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateVenueBase} from "./GateVenueBase.sol";
import {console, Vm} from "../utils/Test.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {IBinaryMarket} from "../../src/interfaces/IBinaryMarket.sol";
import {RiskGate} from "../../src/RiskGate.sol";
import {BinaryMarket} from "../../src/venue/BinaryMarket.sol";

/// @notice A market whose order call fails. Installed with vm.etch at an address the factory
/// really created (a stand-in: the venue's own code does not fail on demand), it plays the
/// market adversary a batch must be isolated from: its views answer like a healthy book (ask
/// 0.42, so the gate passes and orders), and its `buyUp` reverts, reverts with a bomb of
/// `bombBytes` of revert data, or burns every unit of gas it is given.
contract FailingMarket {
    enum Mode {
        Revert,
        RevertBomb,
        BurnGas
    }

    Mode public mode;
    address public resolver;
    uint256 public bombBytes;

    function configure(Mode mode_, address resolver_, uint256 bombBytes_) external {
        mode = mode_;
        resolver = resolver_;
        bombBytes = bombBytes_;
    }

    function gateQuote() external view returns (IBinaryMarket.GateQuote memory q) {
        q = IBinaryMarket.GateQuote({
            bestBid: 400_000,
            bestAsk: 420_000,
            tickSize: 10_000,
            lotSize: 100,
            minQuantity: 100,
            expiry: uint64(block.timestamp + 1 days),
            finalized: false
        });
    }

    function bestBid() external pure returns (uint256) {
        return 400_000;
    }

    function bestAsk() external pure returns (uint256) {
        return 420_000;
    }

    function buyUp(uint256, uint256) external view returns (uint256, uint256) {
        if (mode == Mode.Revert) revert("market closed");
        if (mode == Mode.RevertBomb) {
            uint256 n = bombBytes;
            assembly ("memory-safe") {
                revert(0, n)
            }
        }
        // BurnGas: never returns.
        uint256 spin;
        while (true) {
            ++spin;
        }
        return (spin, spin);
    }
}

/// @notice `submitVerdicts`: each element decides as `submitVerdict` would against the state the
/// earlier ones left, publishes its own Decision, and is isolated from the others' markets and
/// answers. Adversaries: a market creator whose market's order reverts, returns a revert-data
/// bomb or burns its gas; a model whose answer is 100 KB; a keeper that sends too little gas to
/// run an order whole (its batch must revert, not publish a 24).
contract RiskGateBatchTest is GateVenueBase {
    BinaryMarket internal second;
    BinaryMarket internal third;
    BinaryMarket internal fourth;
    BinaryMarket internal pricey;

    function setUp() public override {
        super.setUp();
        second = _bookedMarket();
        third = _bookedMarket();
        fourth = _bookedMarket();
        pricey = newMarket();
        makerQuote(pricey, false, 990_000, 1_000); // UP at 0.99 > maxPrice: rule 5
    }

    function _bookedMarket() internal returns (BinaryMarket m) {
        m = newMarket();
        makerQuote(m, true, 400_000, 20 * marketMinimum());
        makerQuote(m, false, 420_000, 20 * marketMinimum());
    }

    function _one(BinaryMarket m, string memory raw)
        internal
        view
        returns (IRiskGate.Submission memory)
    {
        return IRiskGate.Submission({
            market: address(m),
            raw: raw,
            promptHash: keccak256(bytes(raw)),
            readBlock: readBlockNow(),
            quote: keeperQuote(m, raw)
        });
    }

    function _batch(IRiskGate.Submission[] memory b) internal returns (uint8[] memory) {
        vm.prank(keeperAddr);
        return gate.submitVerdicts(b);
    }

    function _fail(BinaryMarket m, FailingMarket.Mode mode, uint256 bombBytes) internal {
        vm.etch(address(m), type(FailingMarket).runtimeCode);
        FailingMarket(address(m)).configure(mode, address(this), bombBytes);
    }

    function _list(
        IRiskGate.Submission memory a,
        IRiskGate.Submission memory b,
        IRiskGate.Submission memory c
    ) internal pure returns (IRiskGate.Submission[] memory l) {
        l = new IRiskGate.Submission[](3);
        (l[0], l[1], l[2]) = (a, b, c);
    }

    // --- each element decides and publishes

    function test_batch_decidesEachElementInOrder() public {
        IRiskGate.Submission[] memory b = new IRiskGate.Submission[](4);
        b[0] = _one(market, "ABSTAIN");
        b[1] = _one(second, "BUY_UP");
        b[2] = _one(third, "buy up, obviously");
        b[3] = _one(pricey, "BUY_UP");
        vm.recordLogs();
        uint8[] memory reasons = _batch(b);
        // 1 abstained, 0 PASS (ask 0.42 inside the band), 11 not a verdict, 5 price band.
        assertEq(reasons.length, 4);
        assertEq(uint256(reasons[0]), 1);
        assertEq(uint256(reasons[1]), 0);
        assertEq(uint256(reasons[2]), 11);
        assertEq(uint256(reasons[3]), 5);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        uint256 seen;
        for (uint256 i; i < logs.length; ++i) {
            if (logs[i].emitter != address(gate)) continue;
            if (logs[i].topics[0] != IRiskGate.Decision.selector) continue;
            // One Decision per element, in the batch's order, naming its market and reason.
            assertEq(address(uint160(uint256(logs[i].topics[1]))), b[seen].market);
            assertEq(uint256(logs[i].topics[3]), uint256(reasons[seen]));
            ++seen;
        }
        assertEq(seen, 4);
        // The PASS bought 1_000 UP at 0.42 (maxSize 1_000 fits the 2_000 resting): notional 420.
        assertEq(gate.openPositions(), 1);
        assertEq(gate.openNotional(), 420);
    }

    function test_batch_laterElementsSeeEarlierState() public {
        // MAX_CONCURRENT is 3: the fourth distinct buy in one batch is refused with rule 8, as
        // the fourth single submission would be.
        IRiskGate.Submission[] memory b = new IRiskGate.Submission[](4);
        b[0] = _one(market, "BUY_UP");
        b[1] = _one(second, "BUY_UP");
        b[2] = _one(third, "BUY_UP");
        b[3] = _one(fourth, "BUY_UP");
        uint8[] memory reasons = _batch(b);
        assertEq(uint256(reasons[0]), 0);
        assertEq(uint256(reasons[1]), 0);
        assertEq(uint256(reasons[2]), 0);
        assertEq(uint256(reasons[3]), 8);
        assertEq(gate.openPositions(), 3);
        // The rules see the held side too: on a gate with room, the opposite side of a market
        // bought earlier in the same batch is refused with rule 17.
        gate = deployGate(defaultParams());
        token.mint(address(gate), GATE_FUNDS);
        IRiskGate.Submission[] memory c = new IRiskGate.Submission[](2);
        c[0] = _one(fourth, "BUY_UP");
        c[1] = _one(fourth, "BUY_DOWN");
        reasons = _batch(c);
        assertEq(uint256(reasons[0]), 0);
        assertEq(uint256(reasons[1]), 17);
    }

    function test_batch_refusesWhatASingleCallRefuses() public {
        IRiskGate.Submission[] memory empty = new IRiskGate.Submission[](0);
        vm.prank(keeperAddr);
        vm.expectRevert(IRiskGate.BatchEmpty.selector);
        gate.submitVerdicts(empty);

        IRiskGate.Submission[] memory b =
            _list(_one(market, "ABSTAIN"), _one(second, "ABSTAIN"), _one(third, "ABSTAIN"));
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.NotKeeper.selector, address(this), keeperAddr)
        );
        gate.submitVerdicts(b);

        // An element naming a market the factory did not make reverts the whole batch.
        b[1].market = address(0xBEEF);
        vm.prank(keeperAddr);
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.UnknownMarket.selector, address(0xBEEF), venue)
        );
        gate.submitVerdicts(b);

        // So does a read from a block not mined yet.
        b[1] = _one(second, "ABSTAIN");
        b[2].readBlock = readBlockNow() + 1;
        vm.prank(keeperAddr);
        vm.expectRevert(
            abi.encodeWithSelector(
                IRiskGate.ReadBlockInFuture.selector, readBlockNow() + 1, block.number
            )
        );
        gate.submitVerdicts(b);

        b = _list(_one(market, "ABSTAIN"), _one(second, "ABSTAIN"), _one(third, "ABSTAIN"));
        gate.pause();
        vm.prank(keeperAddr);
        vm.expectRevert(IRiskGate.GatePaused.selector);
        gate.submitVerdicts(b);
    }

    function test_batch_onlyOnARelayedGate() public {
        IRiskGate.Attestors memory a;
        a.signers = one(makeAddr("attestor"));
        (a.threshold, a.maxReadAge, a.maxSlippageBps) = (1, 8, 100);
        gate = deployGate(defaultParams(), a);
        IRiskGate.Submission[] memory b =
            _list(_one(market, "ABSTAIN"), _one(second, "ABSTAIN"), _one(third, "ABSTAIN"));
        vm.prank(keeperAddr);
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.WrongGateMode.selector, IRiskGate.GateMode.Attested)
        );
        gate.submitVerdicts(b);
    }

    // --- isolation

    function test_batch_revertingMarketIsReason24AndTheOthersGoOn() public {
        _fail(second, FailingMarket.Mode.Revert, 0);
        uint256 fundsBefore = token.balanceOf(address(gate));
        uint8[] memory reasons =
            _batch(_list(_one(market, "BUY_UP"), _one(second, "BUY_UP"), _one(third, "BUY_UP")));
        assertEq(uint256(reasons[0]), 0);
        assertEq(uint256(reasons[1]), 24);
        assertEq(uint256(reasons[2]), 0);
        // Two fills of 1_000 at 0.42; the failed order bought and spent nothing.
        assertEq(gate.openPositions(), 2);
        assertEq(gate.openNotional(), 840);
        assertEq(token.balanceOf(address(gate)), fundsBefore - 840);
        assertEq(gate.positionOf(address(second)).upUnits, 0);
        // The failed order's approval went with its frame.
        assertEq(token.allowance(address(gate), address(second)), 0);
    }

    function test_batch_failedOrderPublishesItsEvaluationWithNoFill() public {
        _fail(second, FailingMarket.Mode.Revert, 0);
        IRiskGate.Submission memory e = _one(second, "BUY_UP");
        IRiskGate.Submission[] memory b = new IRiskGate.Submission[](1);
        b[0] = e;
        vm.recordLogs();
        _batch(b);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        Vm.Log memory d = logs[logs.length - 1];
        assertEq(d.topics[0], IRiskGate.Decision.selector);
        assertEq(uint256(d.topics[3]), 24);
        (, uint8 verdict, uint32 mask, bytes memory snap, IRiskGate.Order memory order,,,,) = abi.decode(
            d.data, (uint64, uint8, uint32, bytes, IRiskGate.Order, bytes, uint256, bytes32, bytes)
        );
        assertEq(uint256(verdict), 1);
        assertEq(uint256(mask), 1 << 24);
        assertGt(snap.length, 0);
        // The order the rules sized (1_000 at 0.42, limit = the quote's 422_100), nothing filled.
        assertEq(order.pricePaid, 420_000);
        assertEq(order.quantity, 1_000);
        assertEq(order.cost, 420);
        assertEq(order.filled, 0);
        assertEq(order.spent, 0);
    }

    function test_batch_singleCallWithTheSameMarketReverts() public {
        // The single entry point is unchanged: a market that reverts reverts the call.
        _fail(second, FailingMarket.Mode.Revert, 0);
        IRiskGate.Quote memory q = keeperQuote(second, "BUY_UP");
        vm.prank(keeperAddr);
        vm.expectRevert(bytes("market closed"));
        gate.submitVerdict(address(second), "BUY_UP", bytes32(0), readBlockNow(), q);
    }

    function test_batch_gasBurningOrderCostsAtMostOrderGas() public {
        IRiskGate.Submission[] memory b =
            _list(_one(market, "BUY_UP"), _one(second, "BUY_UP"), _one(third, "ABSTAIN"));
        uint256 snap = vm.snapshotState();
        _fail(second, FailingMarket.Mode.Revert, 0);
        _batch(b);
        uint256 plain = vm.lastCallGas().gasTotalUsed;
        vm.revertToState(snap);
        _fail(second, FailingMarket.Mode.BurnGas, 0);
        uint8[] memory reasons = _batch(b);
        uint256 burnt = vm.lastCallGas().gasTotalUsed;
        assertEq(uint256(reasons[0]), 0);
        assertEq(uint256(reasons[1]), 24);
        assertEq(uint256(reasons[2]), 1);
        uint256 order = gate.ORDER_GAS();
        console.log("batch gas with a plain revert", plain);
        console.log("batch gas with an order that burns all it gets", burnt);
        console.log("bound: plain + ORDER_GAS", plain + order);
        // The burner gets exactly ORDER_GAS and uses all of it. The plain revert's order frame
        // used some of the same budget (the approval, the call; under 100,000), so the
        // difference lies between ORDER_GAS - 100,000 and ORDER_GAS.
        assertLe(burnt, plain + order);
        assertGt(burnt, plain + order - 100_000);
    }

    function test_batch_revertDataBombIsNotCopiedByTheGate() public {
        // 600,000 bytes = 18,750 words. Memory for them costs 3 * 18_750 + 18_750^2 / 512 =
        // 56_250 + 686_645 = 742_895 gas in each frame that holds them: the market (revert from
        // memory) and executeOrder (which bubbles them up: a copy at 3 gas a word, 56_250, plus
        // the memory). The two fit in ORDER_GAS. A gate that copied them too would pay about
        // 800,000 more, outside ORDER_GAS.
        uint256 words = 18_750;
        uint256 memoryCost = 3 * words + (words * words) / 512;
        IRiskGate.Submission[] memory b =
            _list(_one(market, "BUY_UP"), _one(second, "BUY_UP"), _one(third, "ABSTAIN"));
        uint256 snap = vm.snapshotState();
        _fail(second, FailingMarket.Mode.Revert, 0);
        _batch(b);
        uint256 plain = vm.lastCallGas().gasTotalUsed;
        vm.revertToState(snap);
        _fail(second, FailingMarket.Mode.RevertBomb, words * 32);
        uint8[] memory reasons = _batch(b);
        uint256 bombed = vm.lastCallGas().gasTotalUsed;
        assertEq(uint256(reasons[1]), 24);
        assertEq(uint256(reasons[2]), 1);
        uint256 bound = plain + 2 * memoryCost + 3 * words + 20_000;
        console.log("batch gas with a 600,000-byte revert", bombed);
        console.log("bound: the two frames inside ORDER_GAS and 20,000", bound);
        assertLe(bombed, bound);
    }

    function test_batch_longAnswerCostsOnlyItsOwnElement() public {
        // A model's 100 KB answer is hashed, its first 64 bytes logged, and nothing else of it
        // kept: the ABSTAINs after it cost what they cost alone.
        string memory huge = string(repeatByte("A", 100_000));
        IRiskGate.Submission[] memory tail = new IRiskGate.Submission[](2);
        tail[0] = _one(second, "ABSTAIN");
        tail[1] = _one(third, "ABSTAIN");
        IRiskGate.Submission[] memory head = new IRiskGate.Submission[](1);
        head[0] = _one(market, huge);
        IRiskGate.Submission[] memory both = new IRiskGate.Submission[](3);
        (both[0], both[1], both[2]) = (head[0], tail[0], tail[1]);

        uint256 snap = vm.snapshotState();
        _batch(head);
        uint256 hugeAlone = vm.lastCallGas().gasTotalUsed;
        vm.revertToState(snap);
        _batch(tail);
        uint256 tailAlone = vm.lastCallGas().gasTotalUsed;
        vm.revertToState(snap);
        uint8[] memory reasons = _batch(both);
        uint256 together = vm.lastCallGas().gasTotalUsed;
        assertEq(uint256(reasons[0]), 11);
        assertEq(uint256(reasons[1]), 1);
        assertEq(uint256(reasons[2]), 1);
        console.log("100 KB answer alone", hugeAlone);
        console.log("two ABSTAINs alone", tailAlone);
        console.log("all three in one batch", together);
        // One batch frame instead of two saves its fixed cost; nothing may be added.
        assertLe(together, hugeAlone + tailAlone);
    }

    function test_batch_tooLittleGasForAnOrderRevertsWhole() public {
        // ORDER_GAS * 64 / 63 + 10_000 = 4_063_492 + 10_000 = 4_073_492 must be left at the order;
        // 2,000,000 is not.
        IRiskGate.Submission[] memory b =
            _list(_one(market, "ABSTAIN"), _one(second, "BUY_UP"), _one(third, "ABSTAIN"));
        vm.prank(keeperAddr);
        try gate.submitVerdicts{gas: 2_000_000}(b) {
            revert("the batch ran on 2,000,000 gas");
        } catch (bytes memory err) {
            // Casting to bytes4 takes the selector: the first four bytes of the revert data.
            // forge-lint: disable-next-line(unsafe-typecast)
            assertEq(bytes4(err), IRiskGate.OrderGasShort.selector);
            (, uint256 needed) = abi.decode(_args(err), (uint256, uint256));
            assertEq(needed, 4_073_492);
        }
        // Nothing was published or bought.
        assertEq(gate.openPositions(), 0);
        // With enough, the same batch runs.
        vm.prank(keeperAddr);
        uint8[] memory reasons = gate.submitVerdicts{gas: 4_400_000}(b);
        assertEq(uint256(reasons[1]), 0);
    }

    function _args(bytes memory err) internal pure returns (bytes memory out) {
        out = new bytes(err.length - 4);
        for (uint256 i; i < out.length; ++i) {
            out[i] = err[i + 4];
        }
    }

    // --- a batch does what the same decisions one by one do

    /// @dev Everything the gate and its markets hold that a decision can change.
    function _state() internal view returns (bytes32) {
        BinaryMarket[5] memory all = [market, second, third, fourth, pricey];
        bytes memory acc = abi.encode(
            gate.openPositions(),
            gate.openNotional(),
            gate.highWaterMark(),
            gate.accountedCollateral(),
            token.balanceOf(address(gate))
        );
        for (uint256 i; i < all.length; ++i) {
            BinaryMarket m = all[i];
            acc = abi.encode(
                acc,
                gate.positionOf(address(m)),
                token.balanceOf(address(m)),
                m.bestBid(),
                m.bestAsk(),
                m.gateQuote()
            );
        }
        return keccak256(acc);
    }

    /// @dev The gate's Decision logs since the last recordLogs, whole.
    function _decisions() internal returns (bytes32) {
        Vm.Log[] memory logs = vm.getRecordedLogs();
        bytes memory acc;
        for (uint256 i; i < logs.length; ++i) {
            if (logs[i].emitter != address(gate)) continue;
            acc = abi.encode(acc, logs[i].topics, logs[i].data);
        }
        return keccak256(acc);
    }

    function testFuzz_batch_equalsTheSameDecisionsOneByOne(uint256 seed, uint8 count) public {
        uint256 n = 1 + (count % 10);
        BinaryMarket[5] memory all = [market, second, third, fourth, pricey];
        string[6] memory answers =
            ["BUY_UP", "BUY_DOWN", "ABSTAIN", " BUY_UP\n", "SELL", "BUY_DOWN"];
        IRiskGate.Submission[] memory b = new IRiskGate.Submission[](n);
        for (uint256 i; i < n; ++i) {
            uint256 r = uint256(keccak256(abi.encode(seed, i)));
            b[i] = _one(all[r % 5], answers[(r >> 8) % 6]);
            // Now and then a quote the book has moved past (rule 15), or a stale one (rule 16).
            if ((r >> 16) % 7 == 0) b[i].quote.maxPricePaid = 1;
            if ((r >> 24) % 11 == 0) b[i].quote.deadline = uint64(block.timestamp) - 1;
        }
        uint256 snap = vm.snapshotState();
        vm.recordLogs();
        uint8[] memory single = new uint8[](n);
        for (uint256 i; i < n; ++i) {
            vm.prank(keeperAddr);
            single[i] = gate.submitVerdict(
                b[i].market, b[i].raw, b[i].promptHash, b[i].readBlock, b[i].quote
            );
        }
        bytes32 singleState = _state();
        bytes32 singleLogs = _decisions();
        vm.revertToState(snap);
        vm.recordLogs();
        uint8[] memory batched = _batch(b);
        assertEq(keccak256(abi.encode(batched)), keccak256(abi.encode(single)));
        assertEq(_state(), singleState);
        assertEq(_decisions(), singleLogs);
    }
}

/// @notice Gas per decision in a batch of 100 (issue 37's targets: ABSTAIN <= 15,000, a refusal
/// that reads the book <= 45,000, PASS <= 200,000), as receipts would charge it: the gate's own
/// gas plus 21,000 and the calldata, over 100. Markets are made in setUp, so storage starts cold.
contract RiskGateBatchGasTest is GateVenueBase {
    uint256 internal constant N = 100;
    BinaryMarket[] internal markets;

    function setUp() public override {
        super.setUp();
        // A gate wide enough for 100 fills of 1_000 at 0.42 (42,000 of notional).
        IRiskGate.Params memory p = defaultParams();
        // casting to 'uint8' is safe because N is 100.
        // forge-lint: disable-next-line(unsafe-typecast)
        p.maxConcurrent = uint8(N);
        p.maxNotional = 1_000_000;
        p.maxDrawdown = 1_000_000;
        gate = deployGate(p);
        token.mint(address(gate), 1_000_000);
        gate.withdrawCollateral(address(this), 0); // H set, as on a gate in service
        for (uint256 i; i < N; ++i) {
            BinaryMarket m = newMarket();
            makerQuote(m, true, 400_000, 20 * marketMinimum());
            makerQuote(m, false, 420_000, 20 * marketMinimum());
            markets.push(m);
        }
    }

    function test_orderGas_coversATakeOfMaxMatches() public {
        // The venue's worst take: MAX_MATCHES_PER_TAKE (64) resting orders, each its own maker
        // (cold slots) on its own price level (each level emptied and unlinked), filled
        // in one order. A gate with maxSize 10_000 buys 6_400 of 70 one-minimum asks at 0.30,
        // 0.31, ..., 0.99 with limit 0.99; executeOrder is called as the gate calls it (from
        // itself). The same take on one level costs about 1.8M.
        IRiskGate.Params memory p = defaultParams();
        p.maxSize = 10_000;
        p.maxNotional = 1_000_000;
        p.maxDrawdown = 1_000_000;
        gate = deployGate(p);
        token.mint(address(gate), 1_000_000);
        BinaryMarket m = newMarket();
        for (uint256 i; i < 70; ++i) {
            // casting to 'uint160' is safe because 0x10000 + i < 2^160.
            // forge-lint: disable-next-line(unsafe-typecast)
            quoteAs(address(uint160(0x10000 + i)), m, false, 300_000 + i * 10_000, marketMinimum());
        }
        vm.prank(address(gate));
        // cost = ceil(10_000 * 990_000 / 1e6) = 9_900.
        (uint256 filled,) = gate.executeOrder(address(m), BUY_UP, 990_000, 10_000, 9_900);
        uint256 used = vm.lastCallGas().gasTotalUsed;
        assertEq(filled, 64 * marketMinimum());
        console.log("executeOrder, a take of 64 matches on 64 levels", used);
        console.log("ORDER_GAS", gate.ORDER_GAS());
        // Room for a repricing of storage costs: the worst take must use under half the budget.
        assertLt(used * 2, gate.ORDER_GAS());
    }

    function _batchOf(uint256 n, string memory raw, uint256 maxPricePaid)
        internal
        view
        returns (IRiskGate.Submission[] memory b)
    {
        b = new IRiskGate.Submission[](n);
        for (uint256 i; i < n; ++i) {
            b[i] = IRiskGate.Submission({
                market: address(markets[i]),
                raw: raw,
                promptHash: keccak256(abi.encode(raw, i)),
                readBlock: readBlockNow(),
                quote: IRiskGate.Quote(maxPricePaid, uint64(block.timestamp) + 60)
            });
        }
    }

    function _run(string memory raw, uint256 maxPricePaid, uint8 expected, string memory what)
        internal
    {
        IRiskGate.Submission[] memory b = _batchOf(N, raw, maxPricePaid);
        vm.prank(keeperAddr);
        uint8[] memory reasons = gate.submitVerdicts(b);
        for (uint256 i; i < N; ++i) {
            assertEq(uint256(reasons[i]), expected);
        }
        bytes memory data = abi.encodeCall(gate.submitVerdicts, (b));
        uint256 zeros;
        for (uint256 i; i < data.length; ++i) {
            if (data[i] == 0) ++zeros;
        }
        uint256 others = data.length - zeros;
        uint256 used = vm.lastCallGas().gasTotalUsed;
        uint256 receipt = 21_000 + 4 * zeros + 16 * others + used;
        uint256 floor = 21_000 + 10 * (zeros + 4 * others);
        if (floor > receipt) receipt = floor;
        console.log(what, receipt / N);
    }

    function test_gas_batchOf100Abstain() public {
        _run("ABSTAIN", 0, 1, "per decision, batch of 100 ABSTAIN (target 15,000)");
    }

    function test_gas_batchOf100RefusalsThatReadTheBook() public {
        // A quote of 0.30 under the 0.42 ask: the book moved past it, rule 15.
        _run(
            "BUY_UP",
            300_000,
            15,
            "per decision, batch of 100 refusals that read the book (target 45,000)"
        );
    }

    function test_gas_batchOf100Pass() public {
        // 1_000 UP at 0.42 each against one resting level; limit 0.4221 (the keeper's 50 bps).
        _run("BUY_UP", 422_100, 0, "per decision, batch of 100 PASS (target 200,000)");
    }

    function test_batch_memoryDoesNotGrowWithItsLength() public {
        // Memory is released after each element. Without that, every element's allocations
        // (its Decision's encoding, its order) would stay, and memory's quadratic price would
        // make each later element dearer than the one before.
        uint256 snap = vm.snapshotState();
        uint256[3] memory gas;
        uint256[3] memory sizes = [uint256(25), 50, 100];
        for (uint256 k; k < 3; ++k) {
            IRiskGate.Submission[] memory b = _batchOf(sizes[k], "ABSTAIN", 0);
            vm.prank(keeperAddr);
            gate.submitVerdicts(b);
            gas[k] = vm.lastCallGas().gasTotalUsed;
            vm.revertToState(snap);
        }
        uint256 early = (gas[1] - gas[0]) / 25;
        uint256 late = (gas[2] - gas[1]) / 50;
        console.log("gas inside the gate per ABSTAIN, elements 26 to 50", early);
        console.log("gas inside the gate per ABSTAIN, elements 51 to 100", late);
        assertLe(late, early + 10);
        assertLe(early, late + 10);
    }
}
