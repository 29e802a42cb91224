// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateAttestedBase} from "./GateAttestedBase.sol";
import {FailingMarket} from "./RiskGate.batch.t.sol";
import {Vm} from "../utils/Vm.sol";
import {relayed} from "../utils/Modes.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {BinaryMarket} from "../../src/venue/BinaryMarket.sol";

/// @notice `submitAttestedVerdicts`: each element is one `submitAttested` call's data after its
/// selector, judged by the attestor set as that call and decided against the state the earlier
/// elements left. Adversaries: a compromised keeper that forges an answer, replays a read
/// inside one batch, or slips a malformed element in (each ends in reason 21 or a whole-batch
/// revert, never a decision the same calls one by one would not make); a market creator whose
/// market's order reverts (reason 24, the others go on).
contract RiskGateAttestedBatchTest is GateAttestedBase {
    BinaryMarket internal second;
    BinaryMarket internal third;

    function setUp() public override {
        super.setUp();
        second = _bookedMarket();
        third = _bookedMarket();
    }

    function _bookedMarket() internal returns (BinaryMarket m) {
        m = newMarket();
        makerQuote(m, true, 400_000, 20 * marketMinimum());
        makerQuote(m, false, 420_000, 20 * marketMinimum());
    }

    /// @dev `submitAttested`'s call data for attestors 0 and 1 answering `a` and `b` on `m` as
    /// it stands, read at the current block, with the keeper's quote for `a`.
    function _call(BinaryMarket m, string memory a, string memory b)
        internal
        view
        returns (bytes memory)
    {
        IRiskGate.Quote memory q = keeperQuote(m, a);
        if (q.deadline == 0) q.deadline = uint64(block.timestamp) + VERDICT_TTL;
        IRiskGate.AttestedRead memory read = readOf(m, "prompt");
        uint64 rb = readBlockNow();
        bytes[] memory sigs = signPair(m, rb, read, 0, a, 1, b, q.deadline);
        return attestedCall(m, rb, strs(a, b), sigs, q, read);
    }

    /// @dev A batch element: the call data after its four-byte selector.
    function _element(bytes memory call) internal pure returns (bytes memory e) {
        e = new bytes(call.length - 4);
        for (uint256 i; i < e.length; ++i) {
            e[i] = call[i + 4];
        }
    }

    function _list(bytes memory a, bytes memory b, bytes memory c)
        internal
        pure
        returns (bytes[] memory l)
    {
        l = new bytes[](3);
        (l[0], l[1], l[2]) = (_element(a), _element(b), _element(c));
    }

    function _batch(bytes[] memory b) internal returns (uint8[] memory) {
        vm.prank(keeperAddr);
        return gate.submitAttestedVerdicts(b);
    }

    /// @dev The gate's Decision logs since the last recordLogs, whole.
    function _decisions() internal returns (bytes32 acc, uint256 n) {
        Vm.Log[] memory logs = vm.getRecordedLogs();
        for (uint256 i; i < logs.length; ++i) {
            if (logs[i].emitter != address(gate)) continue;
            if (logs[i].topics[0] != IRiskGate.Decision.selector) continue;
            acc = keccak256(abi.encode(acc, logs[i].topics, logs[i].data));
            ++n;
        }
    }

    /// @dev Everything the gate and these markets hold that a decision can change.
    function _state() internal view returns (bytes32) {
        BinaryMarket[3] memory all = [market, second, third];
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
                acc, gate.positionOf(address(m)), token.balanceOf(address(m)), m.gateQuote()
            );
        }
        return keccak256(acc);
    }

    // --- each element decides as its single call

    function test_attestedBatch_decidesEachElementInOrder() public {
        // A BUY_UP both attestors gave (0: passes at the book), an ABSTAIN (1), a split (22),
        // and the keeper's forgery: it signs in attestor 1's place (21).
        bytes memory forged;
        {
            IRiskGate.Quote memory q = keeperQuote(third, "BUY_UP");
            IRiskGate.AttestedRead memory read = readOf(third, "prompt");
            uint64 rb = readBlockNow();
            bytes[] memory sigs = new bytes[](2);
            sigs[0] = signAnswer(keys[0], third, rb, read, "BUY_UP", q.deadline);
            sigs[1] = signAnswer(keeperKey, third, rb, read, "BUY_UP", q.deadline);
            forged = attestedCall(third, rb, strs("BUY_UP", "BUY_UP"), sigs, q, read);
        }
        bytes[] memory b = new bytes[](4);
        b[0] = _element(_call(market, "BUY_UP", "BUY_UP"));
        b[1] = _element(_call(second, "ABSTAIN", "ABSTAIN"));
        b[2] = _element(forged);
        b[3] = _element(_call(second, "BUY_UP", "BUY_DOWN"));
        vm.recordLogs();
        uint8[] memory reasons = _batch(b);
        assertEq(uint256(reasons[0]), 0, "attested BUY_UP");
        assertEq(uint256(reasons[1]), 1, "attested ABSTAIN");
        assertEq(uint256(reasons[2]), NOT_ATTESTED, "keeper-signed answer");
        // Element 3 reads `second` at the block element 1 already used: taken once, so 21
        // before its split is even looked at.
        assertEq(uint256(reasons[3]), NOT_ATTESTED, "the same read again");
        (, uint256 n) = _decisions();
        assertEq(n, 4, "one Decision per element");
        // One fill of 1_000 UP at 0.42.
        assertEq(gate.openPositions(), 1);
        assertEq(gate.openNotional(), 420);
    }

    function test_attestedBatch_sameReadTwiceIsTakenOnce() public {
        bytes memory call = _call(second, "ABSTAIN", "ABSTAIN");
        uint8[] memory reasons = _batch(_list(call, _call(third, "ABSTAIN", "ABSTAIN"), call));
        assertEq(uint256(reasons[0]), 1);
        assertEq(uint256(reasons[1]), 1);
        assertEq(uint256(reasons[2]), NOT_ATTESTED, "a replay inside the batch");
        // And after it, as a single call.
        assertEq(sendAsKeeper(call), NOT_ATTESTED, "a replay after the batch");
    }

    /// Each run signs up to twelve answers, so CI runs 2,000 rather than the profile's 10,000.
    /// forge-config: ci.fuzz.runs = 2000
    function testFuzz_attestedBatch_equalsTheSameCallsOneByOne(uint256 seed, uint8 count) public {
        uint256 n = 1 + (count % 6);
        BinaryMarket[3] memory all = [market, second, third];
        string[5] memory answers = ["BUY_UP", "BUY_DOWN", "ABSTAIN", "SELL", " BUY_UP\n"];
        bytes[] memory calls = new bytes[](n);
        bytes[] memory b = new bytes[](n);
        for (uint256 i; i < n; ++i) {
            uint256 r = uint256(keccak256(abi.encode(seed, i)));
            string memory a = answers[r % 5];
            // Mostly agreeing pairs; now and then a split.
            string memory second_ = (r >> 8) % 4 == 0 ? answers[(r >> 16) % 5] : a;
            calls[i] = _call(all[(r >> 24) % 3], a, second_);
            b[i] = _element(calls[i]);
        }
        uint256 snap = vm.snapshotState();
        vm.recordLogs();
        uint8[] memory single = new uint8[](n);
        for (uint256 i; i < n; ++i) {
            single[i] = sendAsKeeper(calls[i]);
        }
        bytes32 singleState = _state();
        (bytes32 singleLogs,) = _decisions();
        vm.revertToState(snap);
        vm.recordLogs();
        uint8[] memory batched = _batch(b);
        assertEq(keccak256(abi.encode(batched)), keccak256(abi.encode(single)), "reasons");
        assertEq(_state(), singleState, "state");
        (bytes32 batchLogs,) = _decisions();
        assertEq(batchLogs, singleLogs, "Decisions");
    }

    // --- what a single call refuses, the batch refuses whole

    function test_attestedBatch_refusesWhatASingleCallRefuses() public {
        vm.prank(keeperAddr);
        vm.expectRevert(IRiskGate.BatchEmpty.selector);
        gate.submitAttestedVerdicts(new bytes[](0));

        bytes[] memory b = _list(
            _call(market, "ABSTAIN", "ABSTAIN"),
            _call(second, "ABSTAIN", "ABSTAIN"),
            _call(third, "ABSTAIN", "ABSTAIN")
        );
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.NotKeeper.selector, address(this), keeperAddr)
        );
        gate.submitAttestedVerdicts(b);

        // An element shorter than the fixed head (6 words) names its index and length.
        bytes memory good = b[1];
        b[1] = new bytes(0xa0);
        vm.prank(keeperAddr);
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.AttestedElementShort.selector, 1, 0xa0, 0xc0)
        );
        gate.submitAttestedVerdicts(b);

        // An element without its appended read: the set's own error, the whole batch reverts.
        b[1] = new bytes(good.length - 96);
        for (uint256 i; i < b[1].length; ++i) {
            b[1][i] = good[i];
        }
        vm.prank(keeperAddr);
        // The set sees selector + element: its arguments end where its call data does.
        uint256 end = 4 + b[1].length;
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.AttestedReadMissing.selector, end, end));
        gate.submitAttestedVerdicts(b);

        // An element naming a market the factory did not make.
        b[1] = good;
        b[2] = _element(_call(third, "ABSTAIN", "ABSTAIN"));
        assembly ("memory-safe") {
            // The element's first word is the market.
            mstore(add(mload(add(b, 0x60)), 0x20), 0xBEEF)
        }
        vm.prank(keeperAddr);
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.UnknownMarket.selector, address(0xBEEF), venue)
        );
        gate.submitAttestedVerdicts(b);

        // A read from a block not mined yet (word 1, the read block).
        b[2] = _element(_call(third, "ABSTAIN", "ABSTAIN"));
        uint256 future = readBlockNow() + 1;
        assembly ("memory-safe") {
            mstore(add(mload(add(b, 0x60)), 0x40), future)
        }
        vm.prank(keeperAddr);
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.ReadBlockInFuture.selector, future, block.number)
        );
        gate.submitAttestedVerdicts(b);

        b[2] = _element(_call(third, "ABSTAIN", "ABSTAIN"));
        gate.pause();
        vm.prank(keeperAddr);
        vm.expectRevert(IRiskGate.GatePaused.selector);
        gate.submitAttestedVerdicts(b);
        gate.unpause();

        // Nothing above published or changed anything: the batch still goes through whole.
        uint8[] memory reasons = _batch(b);
        assertEq(uint256(reasons[0]) + reasons[1] + reasons[2], 3, "three ABSTAINs");
    }

    function test_attestedBatch_onlyOnAnAttestedGate() public {
        bytes[] memory b = _list(
            _call(market, "ABSTAIN", "ABSTAIN"),
            _call(second, "ABSTAIN", "ABSTAIN"),
            _call(third, "ABSTAIN", "ABSTAIN")
        );
        gate = deployGate(defaultParams(), relayed());
        vm.prank(keeperAddr);
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.WrongGateMode.selector, IRiskGate.GateMode.Relayed)
        );
        gate.submitAttestedVerdicts(b);
    }

    // --- isolation

    function test_attestedBatch_revertingMarketIsReason24AndTheOthersGoOn() public {
        // The failing market's book reads 0.40 / 0.42 like the others, so its read is signed
        // as theirs; only its order call reverts.
        bytes[] memory b = new bytes[](3);
        b[0] = _element(_call(market, "BUY_UP", "BUY_UP"));
        b[2] = _element(_call(third, "BUY_UP", "BUY_UP"));
        vm.etch(address(second), type(FailingMarket).runtimeCode);
        FailingMarket(address(second)).configure(FailingMarket.Mode.Revert, address(this), 0);
        b[1] = _element(_call(second, "BUY_UP", "BUY_UP"));
        uint256 fundsBefore = token.balanceOf(address(gate));
        uint8[] memory reasons = _batch(b);
        assertEq(uint256(reasons[0]), 0);
        assertEq(uint256(reasons[1]), 24, "the failing market's order");
        assertEq(uint256(reasons[2]), 0);
        // Two fills of 1_000 at 0.42; the failed order bought and spent nothing.
        assertEq(gate.openPositions(), 2);
        assertEq(gate.openNotional(), 840);
        assertEq(token.balanceOf(address(gate)), fundsBefore - 840);
        assertEq(token.allowance(address(gate), address(second)), 0);
    }
}
