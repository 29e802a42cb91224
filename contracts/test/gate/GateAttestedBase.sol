// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateVenueBase} from "./GateVenueBase.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {IAttestorSet} from "../../src/interfaces/IAttestorSet.sol";
import {BinaryMarket} from "../../src/venue/BinaryMarket.sol";
import {attestedDomain, attestedDigest} from "../utils/AttestedSigning.sol";

/// @notice The venue fixture with an attested gate in place of the relayed one: three attestors
/// (test keys), k = 2, reads at most 5 blocks old, 2 % slippage over the attested price. Signing
/// is `utils/AttestedSigning.sol`'s, written from the specification, not the gate's library.
abstract contract GateAttestedBase is GateVenueBase {
    uint8 internal constant K = 2;
    uint32 internal constant MAX_READ_AGE = 5;
    uint16 internal constant MAX_SLIPPAGE_BPS = 200;
    uint8 internal constant NOT_ATTESTED = 21;
    uint8 internal constant DISAGREE = 22;

    /// @dev Attestor keys, sorted by address in setUp: key[i] signs as signer[i].
    uint256[3] internal keys;
    address[3] internal signers;
    uint256 internal keeperKey = 0xBEEF;

    function setUp() public virtual override {
        super.setUp();
        uint256[3] memory k = [uint256(0xA11CE), uint256(0xB0B), uint256(0xCA401)];
        // Insertion sort of three keys by address.
        for (uint256 i = 1; i < 3; ++i) {
            for (uint256 j = i; j > 0 && vm.addr(k[j - 1]) > vm.addr(k[j]); --j) {
                (k[j - 1], k[j]) = (k[j], k[j - 1]);
            }
        }
        for (uint256 i; i < 3; ++i) {
            keys[i] = k[i];
            signers[i] = vm.addr(k[i]);
        }
        gate = deployGate(defaultParams(), attestorsOf(3, K));
        token.mint(address(gate), GATE_FUNDS);
    }

    /// @dev The first `n` fixture signers (ascending), threshold `k`.
    function attestorsOf(uint256 n, uint8 k) internal view returns (IRiskGate.Attestors memory a) {
        a.signers = new address[](n);
        for (uint256 i; i < n; ++i) {
            a.signers[i] = signers[i];
        }
        a.threshold = k;
        a.maxReadAge = MAX_READ_AGE;
        a.maxSlippageBps = MAX_SLIPPAGE_BPS;
    }

    /// @dev What attestors sign besides their answer: the prompt hash and the book at `readBlock`.
    function readOf(BinaryMarket m, string memory prompt)
        internal
        view
        returns (IRiskGate.AttestedRead memory)
    {
        return IRiskGate.AttestedRead(keccak256(bytes(prompt)), m.bestBid(), m.bestAsk());
    }

    function domainOf(address g, uint256 chainId) internal pure returns (bytes32) {
        return attestedDomain(g, chainId);
    }

    /// @dev keccak256("\x19\x01" ‖ domain ‖ hashStruct(Answer)).
    function answerDigest(
        bytes32 domain,
        address m,
        uint64 readBlock,
        IRiskGate.AttestedRead memory read,
        string memory raw,
        uint64 deadline
    ) internal pure returns (bytes32) {
        return attestedDigest(domain, m, readBlock, read, raw, deadline);
    }

    /// @dev `key`'s 65-byte signature `r ‖ s ‖ v` of `raw` on this gate and chain.
    function signAnswer(
        uint256 key,
        BinaryMarket m,
        uint64 readBlock,
        IRiskGate.AttestedRead memory read,
        string memory raw,
        uint64 deadline
    ) internal view returns (bytes memory) {
        bytes32 d = answerDigest(
            domainOf(address(gate), block.chainid), address(m), readBlock, read, raw, deadline
        );
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(key, d);
        return abi.encodePacked(r, s, v);
    }

    /// @dev Fixture attestors `i` and `j` sign `ri` and `rj` on `m`'s read `read` at `rb`.
    function signPair(
        BinaryMarket m,
        uint64 rb,
        IRiskGate.AttestedRead memory read,
        uint256 i,
        string memory ri,
        uint256 j,
        string memory rj,
        uint64 deadline
    ) internal view returns (bytes[] memory sigs) {
        sigs = new bytes[](2);
        sigs[0] = signAnswer(keys[i], m, rb, read, ri, deadline);
        sigs[1] = signAnswer(keys[j], m, rb, read, rj, deadline);
    }

    /// @dev A trader takes `quantity` of `m`'s book up to `limit`: the UP asks (`up`) or the
    /// bids (buying DOWN at `1e6 - limit` or better), as a mempool trader does between the
    /// attestors' read and the keeper's transaction.
    function takeAsTrader(BinaryMarket m, bool up, uint256 limit, uint256 quantity) internal {
        address trader = makeAddr("trader");
        token.mint(trader, 1_000_000);
        vm.startPrank(trader);
        token.approve(address(m), type(uint256).max);
        if (up) m.buyUp(limit, quantity);
        else m.buyDown(limit, quantity);
        vm.stopPrank();
    }

    /// @dev The call the keeper sends: the ABI encoding of `submitAttested` with the read
    /// appended.
    function attestedCall(
        BinaryMarket m,
        uint64 readBlock,
        string[] memory raws,
        bytes[] memory sigs,
        IRiskGate.Quote memory q,
        IRiskGate.AttestedRead memory read
    ) internal view returns (bytes memory) {
        return bytes.concat(
            abi.encodeCall(gate.submitAttested, (address(m), readBlock, raws, sigs, q)),
            abi.encode(read)
        );
    }

    /// @dev Sends `data` as the keeper; the reason on success, else bubbles the revert.
    function sendAsKeeper(bytes memory data) internal returns (uint8) {
        vm.prank(keeperAddr);
        (bool ok, bytes memory ret) = address(gate).call(data);
        if (!ok) {
            assembly {
                revert(add(ret, 0x20), mload(ret))
            }
        }
        return abi.decode(ret, (uint8));
    }

    /// @dev Attestors `who` (indices into the fixture, in the order given) each sign their
    /// answer in `raws` on the book of `m` as it stands, read at the current block, with the
    /// keeper's quote for the first answer; the keeper submits.
    function attest(BinaryMarket m, uint256[] memory who, string[] memory raws)
        internal
        returns (uint8)
    {
        IRiskGate.Quote memory q = keeperQuote(m, raws[0]);
        if (q.deadline == 0) q.deadline = uint64(block.timestamp) + VERDICT_TTL;
        return attestQuoted(m, who, raws, q);
    }

    function attestQuoted(
        BinaryMarket m,
        uint256[] memory who,
        string[] memory raws,
        IRiskGate.Quote memory q
    ) internal returns (uint8) {
        IRiskGate.AttestedRead memory read = readOf(m, "prompt");
        uint64 rb = readBlockNow();
        bytes[] memory sigs = new bytes[](who.length);
        for (uint256 i; i < who.length; ++i) {
            sigs[i] = signAnswer(keys[who[i]], m, rb, read, raws[i], q.deadline);
        }
        return sendAsKeeper(attestedCall(m, rb, raws, sigs, q, read));
    }

    function idx(uint256 a, uint256 b) internal pure returns (uint256[] memory l) {
        l = new uint256[](2);
        (l[0], l[1]) = (a, b);
    }

    function idx(uint256 a, uint256 b, uint256 c) internal pure returns (uint256[] memory l) {
        l = new uint256[](3);
        (l[0], l[1], l[2]) = (a, b, c);
    }

    function strs(string memory a) internal pure returns (string[] memory l) {
        l = new string[](1);
        l[0] = a;
    }

    function strs(string memory a, string memory b) internal pure returns (string[] memory l) {
        l = new string[](2);
        (l[0], l[1]) = (a, b);
    }

    function strs(string memory a, string memory b, string memory c)
        internal
        pure
        returns (string[] memory l)
    {
        l = new string[](3);
        (l[0], l[1], l[2]) = (a, b, c);
    }

    function set() internal view returns (IAttestorSet) {
        return IAttestorSet(gate.attestorSet());
    }
}
